package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.testing.TestDatabases;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

class MariaDbFencedRowsTest extends FencedRowsContract {
    @Override
    protected DataSource createDataSource() {
        return TestDatabases.mariadb();
    }

    @Test
    void detectsMariaDb() throws SQLException {
        try (Connection c = dataSource().getConnection()) {
            assertThat(JdbcDialect.detect(c)).isSameAs(MariaDbDialect.INSTANCE);
        }
    }
}
