package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.Lease;
import dev.fenced.testing.servers.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link JdbcLeaseStore} on PostgreSQL: the lease store contract and the database's own cases. */
class JdbcLeaseStorePostgresTest extends JdbcLeaseStoreContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }

    @Override
    protected long sessionId(Connection connection) throws SQLException {
        return single(connection, "SELECT pg_backend_pid()", null);
    }

    @Override
    protected void terminate(Connection admin, long id) throws SQLException {
        single(admin, "SELECT CASE WHEN pg_terminate_backend(CAST(? AS int)) THEN 1 ELSE 0 END", id);
    }

    @Override
    protected boolean waitsForALock(Connection admin, long id) throws SQLException {
        return single(admin, "SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ? AND wait_event_type = 'Lock'", id) == 1;
    }

    @Override
    protected String expireSql() {
        return "UPDATE fence_lease SET expires_at = clock_timestamp() - INTERVAL '1 second' WHERE resource = ?";
    }

    @Override
    protected String nextTokenExpression() {
        return "nextval('fence_token_seq')";
    }

    @Override
    protected String sessionZoneSql(String zone) {
        return "SET TIME ZONE INTERVAL '" + zone + "' HOUR TO MINUTE";
    }

    @Override
    protected List<String> localTimeControl(String table) {
        return List.of("CREATE TABLE IF NOT EXISTS " + table + " (resource VARCHAR(200) PRIMARY KEY, expires_at TIMESTAMP NOT NULL)",
                "INSERT INTO " + table + " VALUES (?, LOCALTIMESTAMP + INTERVAL '10 seconds')"
                        + " ON CONFLICT (resource) DO UPDATE SET expires_at = EXCLUDED.expires_at",
                "SELECT FLOOR(EXTRACT(EPOCH FROM (expires_at - LOCALTIMESTAMP)) * 1000000)::bigint FROM " + table + " WHERE resource = ?");
    }

    @Override
    protected String unreachableUrl(String password) {
        return "jdbc:postgresql://127.0.0.1:1/test?user=fenced&password=" + password + "&connectTimeout=2";
    }

    /**
     * A release's commit does not wait for the WAL flush (lost in a crash, it leaves the lease to end
     * by its TTL, with the same token), a grant's does; neither changes the pooled session. (The
     * embedded server runs with synchronous_commit off throughout; the servers CI names keep it on.)
     */
    @Test
    void onlyTheReleaseCommitsWithoutWaitingForTheDiskAndTheSessionKeepsItsDurability() throws SQLException {
        LeaseSql statements = LeaseSql.of(PostgresDialect.INSTANCE, "fence_lease", JdbcSequenceTokenSource.DEFAULT_SEQUENCE, true,
                Duration.ofSeconds(5));
        String configured;
        try (Connection c = pool.getConnection()) {
            configured = synchronousCommit(c);
            c.setAutoCommit(false);
            try {
                long token = statements.acquire(c, "durability:grant", "owner-a", 30_000);
                assertThat(token).isPositive();
                assertThat(synchronousCommit(c)).as("after the grant, in its transaction").isEqualTo(configured);
                assertThat(statements.release(c, "durability:grant", "owner-a", token)).isTrue();
                assertThat(synchronousCommit(c)).as("after the release, in its transaction").isEqualTo("off");
            } finally {
                c.rollback();
                c.setAutoCommit(true);
            }
            assertThat(synchronousCommit(c)).as("once that transaction ended").isEqualTo(configured);
        }
        try (HikariDataSource one = pool(jdbcUrl(), 1, null)) {
            JdbcLeaseStore store = JdbcLeaseStore.builder(one).build();
            Lease lease = store.tryAcquire("durability:pooled", Duration.ofSeconds(30)).orElseThrow();
            assertThat(lease.release()).isTrue();
            try (Connection c = one.getConnection()) {
                assertThat(synchronousCommit(c)).as("the pool's one session after the store released on it").isEqualTo(configured);
            }
        }
    }

    private static String synchronousCommit(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW synchronous_commit")) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static long single(Connection c, String sql, Long parameter) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            if (parameter != null) {
                s.setLong(1, parameter);
            }
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
