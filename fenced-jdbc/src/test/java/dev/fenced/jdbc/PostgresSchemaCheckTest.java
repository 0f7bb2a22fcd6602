package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.testing.servers.TestDatabases;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

class PostgresSchemaCheckTest extends SchemaCheckContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }

    /** PostgreSQL folds unquoted names to lower case, and so does the check. */
    @Test
    void namesInAnyCaseAreTheSameTable() throws SQLException {
        assertThat(problems(FencedTable.builder("SC_FIT").build())).isEmpty();
    }
}
