package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.FenceViolation;
import dev.fenced.testing.TestDatabases;
import dev.fenced.testing.UrlDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
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

    /** With the bulk protocol the driver reports no count per row; the batch confirm reads the rows back instead. */
    @Test
    void aBatchConfirmOverTheBulkProtocolStillTellsConfirmedFromRefused() throws SQLException {
        String url = ((UrlDataSource) dataSource()).url();
        DataSource bulk = new UrlDataSource(url + (url.contains("?") ? "&" : "?") + "useBulkStmts=true");
        String table = "fenced_bulk_test";
        try (Connection c = bulk.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
            s.execute("CREATE TABLE " + table + " (id VARCHAR(64) PRIMARY KEY, state VARCHAR(16) NOT NULL,"
                    + " fence BIGINT NOT NULL DEFAULT 0, note VARCHAR(200))");
            s.execute("INSERT INTO " + table + " (id, state, fence) VALUES ('r_1', 'sending', 10), ('r_2', 'sending', 11), ('r_3', 'sending', 10)");
            FencedRows rows = FencedRows.of(FencedTable.builder(table).build());
            Map<String, Map<String, String>> batch = new LinkedHashMap<>();
            batch.put("r_1", Map.of("note", "gw_1"));
            batch.put("r_2", Map.of("note", "gw_2"));
            batch.put("r_3", Map.of("note", "gw_3"));
            BatchConfirm confirm = rows.confirmAll(c, batch, 10);
            assertThat(confirm.confirmed()).containsExactlyInAnyOrder("r_1", "r_3");
            assertThat(confirm.refusal("r_2").orElseThrow()).isInstanceOf(FenceViolation.class);
            s.execute("DROP TABLE " + table);
        }
    }
}
