package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.FenceViolation;
import dev.fenced.testing.servers.TestDatabases;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

class PostgresFencedRowsTest extends FencedRowsContract {
    @Override
    protected DataSource createDataSource() {
        return TestDatabases.postgres();
    }

    /** A dialect given up front is used for every connection: a batch claim and its refusals need no detection. */
    @Test
    void aGivenDialectServesTheBatchClaimAndItsRefusals() throws SQLException {
        String table = "fenced_given_dialect";
        try (Connection c = dataSource().getConnection(); java.sql.Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
            s.execute("CREATE TABLE " + table + " (id VARCHAR(64) PRIMARY KEY, state VARCHAR(16) NOT NULL, fence BIGINT NOT NULL DEFAULT 0)");
            s.execute("INSERT INTO " + table + " (id, state, fence) VALUES ('r_1', 'pending', 0), ('r_2', 'sending', 9)");
            BatchClaim claim = FencedRows.of(refundLike(table), PostgresDialect.INSTANCE).claimAll(c, java.util.List.of("r_1", "r_2"), 5);
            assertThat(claim.claimed()).containsExactly("r_1");
            assertThat(((FenceViolation) claim.refusals().get("r_2")).storedFence()).isEqualTo(9L);
            s.execute("DROP TABLE " + table);
        }
    }

    @Test
    void detectsPostgres() throws SQLException {
        try (Connection c = dataSource().getConnection()) {
            assertThat(JdbcDialect.detect(c)).isSameAs(PostgresDialect.INSTANCE);
        }
    }

    @Test
    void underRepeatableReadAConcurrentClaimIsASerializationConflictNotAViolation() throws SQLException {
        String table = "fenced_rr_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        execute("CREATE TABLE " + table + " (id VARCHAR(64) PRIMARY KEY, state VARCHAR(16) NOT NULL, fence BIGINT NOT NULL)");
        try {
            execute("INSERT INTO " + table + " VALUES ('r_1', 'pending', 0)");
            FencedRows fenced = FencedRows.of(refundLike(table));
            try (Connection older = dataSource().getConnection(); Connection newer = dataSource().getConnection()) {
                older.setAutoCommit(false);
                older.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                try (Statement s = older.createStatement(); ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
                    rs.next(); // takes the snapshot
                }
                fenced.claim(newer, "r_1", 34);
                assertThatThrownBy(() -> fenced.claim(older, "r_1", 35))
                        .isInstanceOf(SerializationConflictException.class)
                        .isNotInstanceOf(FenceViolation.class)
                        .satisfies(e -> assertThat(((SerializationConflictException) e).sqlState()).isEqualTo("40001"));
                older.rollback();
                // retried in a new transaction, the higher token wins as it should
                fenced.claim(older, "r_1", 35);
                older.commit();
            }
        } finally {
            execute("DROP TABLE " + table);
        }
    }

    /** A table with the refund table's states, which these tests' rows are written in. */
    private static FencedTable refundLike(String table) {
        return FencedTable.builder(table).states("pending", "sending", "sent").build();
    }
}
