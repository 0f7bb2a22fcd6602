package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.FenceViolation;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.UrlDataSource;
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

    /**
     * Under MariaDB's default collation 'R_1 ' and 'r_1' are one row: a batch claim that names the
     * row that way reports it claimed, not claimed and refused at once.
     */
    @Test
    void idsThatDifferOnlyInCaseOrTrailingSpaceAreTheRowTheDatabaseClaimed() throws SQLException {
        String table = "fenced_ci_test";
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
            s.execute("CREATE TABLE " + table + " (id VARCHAR(64) PRIMARY KEY, state VARCHAR(16) NOT NULL, fence BIGINT NOT NULL DEFAULT 0)");
            s.execute("INSERT INTO " + table + " (id, state) VALUES ('r_1', 'pending'), ('r_2', 'pending')");
            BatchClaim claim = FencedRows.of(refundLike(table)).claimAll(c, java.util.List.of("R_1 ", "r_2"), 7);
            assertThat(claim.claimed()).hasSize(2);
            assertThat(claim.refusals()).isEmpty();
            s.execute("DROP TABLE " + table);
        }
    }

    /**
     * At REPEATABLE READ a plain read shows the transaction's snapshot. A refusal is read back with a
     * locking read, so it reports the fence another holder committed after the snapshot, and the
     * counter can be raised past it. Control: the plain read in the same transaction still shows the
     * old fence.
     */
    @Test
    void aRefusalAtRepeatableReadReportsTheRowAsItIsNotTheSnapshot() throws SQLException {
        String table = "fenced_rr_test";
        try (Connection setup = dataSource().getConnection(); Statement s = setup.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
            s.execute("CREATE TABLE " + table + " (id VARCHAR(64) PRIMARY KEY, state VARCHAR(16) NOT NULL, fence BIGINT NOT NULL DEFAULT 0)");
            s.execute("INSERT INTO " + table + " (id, state, fence) VALUES ('r_1', 'sending', 40)");
        }
        FencedRows rows = FencedRows.of(refundLike(table));
        try (Connection stale = dataSource().getConnection(); Connection newer = dataSource().getConnection()) {
            stale.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            stale.setAutoCommit(false);
            try (Statement s = stale.createStatement(); java.sql.ResultSet rs = s.executeQuery("SELECT fence FROM " + table + " WHERE id = 'r_1'")) {
                rs.next(); // the snapshot begins here, at fence 40
            }
            rows.claim(newer, "r_1", 50);
            FenceViolation refused = (FenceViolation) org.assertj.core.api.Assertions.catchThrowable(() -> rows.confirm(stale, "r_1", 40));
            assertThat(refused.storedFence()).isEqualTo(50L);
            try (Statement s = stale.createStatement(); java.sql.ResultSet rs = s.executeQuery("SELECT fence FROM " + table + " WHERE id = 'r_1'")) {
                rs.next();
                assertThat(rs.getLong(1)).as("control: the snapshot still says 40").isEqualTo(40L);
            }
            stale.rollback();
        }
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE " + table);
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
            FencedRows rows = FencedRows.of(refundLike(table));
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

    /** A table with the refund table's states, which these tests' rows are written in. */
    private static FencedTable refundLike(String table) {
        return FencedTable.builder(table).states("pending", "sending", "sent").build();
    }
}
