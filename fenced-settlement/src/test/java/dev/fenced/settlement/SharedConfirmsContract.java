package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FenceViolation;
import dev.fenced.FencedException;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The confirms of several runs written in one batch ({@link SharedConfirms}), against a real
 * database: each row is fenced by its own run's token, and a batch that fails leaves every row in
 * it {@code sending}. One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SharedConfirmsContract {
    private static final SettlementWorker.PhaseHook NO_HOOK = (phase, subject) -> { };

    private HikariDataSource db;

    /** A JDBC URL of the database under test. */
    protected abstract String jdbcUrl();

    @BeforeAll
    void start() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setMaximumPoolSize(4);
        db = new HikariDataSource(config);
        RefundSchema.migrate(db);
    }

    @AfterAll
    void stop() {
        if (db != null) {
            db.close();
        }
    }

    /**
     * One batch holds a new run's confirm of r_a (token 34, the row's fence), a stale run's confirm
     * of the same r_a (token 33, paused, its lease taken over) and a third run's confirm of another
     * merchant's r_b (token 7). The stale one is refused, the others land, in one commit. Control:
     * the same batch with writes that do not check the token lets the stale run's reference
     * overwrite the new run's, and nothing is refused.
     */
    @ParameterizedTest(name = "fencing off: {0}")
    @ValueSource(booleans = {false, true})
    void eachRunsRowsInOneBatchAreFencedByThatRunsToken(boolean control) throws SQLException {
        String a = sendingRow(34);
        String b = sendingRow(7);
        RefundWrites writes = control ? new TokenBlindWrites() : RefundWrites.fenced();
        RunWrites current = new RunWrites(db, writes, 34, NO_HOOK);
        RunWrites stale = new RunWrites(db, writes, 33, NO_HOOK);
        RunWrites other = new RunWrites(db, writes, 7, NO_HOOK);
        Map<SharedConfirms.Entry, String> batch = new LinkedHashMap<>();
        batch.put(new SharedConfirms.Entry(current, a), "gw_new");
        batch.put(new SharedConfirms.Entry(other, b), "gw_b");
        batch.put(new SharedConfirms.Entry(stale, a), "gw_stale");

        Map<SharedConfirms.Entry, FencedException> refusals = SharedConfirms.write(batch);

        assertThat(row(b)).containsExactly("sent", "gw_b");
        if (control) {
            assertThat(refusals).as("nothing refused without the fence").isEmpty();
            assertThat(row(a)).as("the stale run's reference overwrote the new run's").containsExactly("sent", "gw_stale");
            return;
        }
        assertThat(refusals).containsOnlyKeys(new SharedConfirms.Entry(stale, a));
        assertThat(refusals.get(new SharedConfirms.Entry(stale, a))).isInstanceOfSatisfying(FenceViolation.class,
                v -> assertThat(v.storedFence()).isEqualTo(34L));
        assertThat(row(a)).containsExactly("sent", "gw_new");
    }

    /**
     * A batch that the database refuses (a reference longer than its column) is rolled back whole:
     * the other run's row, which alone would have been confirmed, stays {@code sending}, for its
     * next holder to look up. Written run by run, that row would be {@code sent}.
     */
    @Test
    void aBatchThatFailsLeavesTheRowsOfEveryRunInItSending() {
        String a = sendingRow(34);
        String b = sendingRow(7);
        Map<SharedConfirms.Entry, String> batch = new LinkedHashMap<>();
        batch.put(new SharedConfirms.Entry(new RunWrites(db, RefundWrites.fenced(), 34, NO_HOOK), a), "gw_a");
        batch.put(new SharedConfirms.Entry(new RunWrites(db, RefundWrites.fenced(), 7, NO_HOOK), b), "x".repeat(65));

        assertThatThrownBy(() -> SharedConfirms.write(batch)).isInstanceOfAny(SQLException.class, FencedException.class);

        assertThat(row(a)).as("rolled back with the other run's row").containsExactly("sending", null);
        assertThat(row(b)).containsExactly("sending", null);
    }

    /** A refund of a merchant of its own, claimed: {@code sending} under {@code fence}. */
    private String sendingRow(long fence) {
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(db, merchant, merchant + "_r", 1, new BigDecimal("70.25"), "EUR");
        try (Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("UPDATE refund SET state = 'sending', fence = ? WHERE merchant = ?")) {
            s.setLong(1, fence);
            s.setString(2, merchant);
            assertThat(s.executeUpdate()).isEqualTo(1);
            try (PreparedStatement id = c.prepareStatement("SELECT id FROM refund WHERE merchant = ?")) {
                id.setString(1, merchant);
                try (ResultSet rs = id.executeQuery()) {
                    rs.next();
                    return rs.getString(1);
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The row's state and gateway reference. */
    private List<String> row(String id) {
        try (Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT state, gateway_reference FROM refund WHERE id = ?")) {
            s.setString(1, id);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return java.util.Arrays.asList(rs.getString(1), rs.getString(2));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The control's writes: a confirm that records the reference and never checks the token. */
    private static final class TokenBlindWrites implements RefundWrites {
        @Override
        public Map<String, FencedException> claimAll(Connection connection, List<String> ids, long token) {
            throw new UnsupportedOperationException("the control only confirms");
        }

        @Override
        public Map<String, FencedException> confirmAll(Connection connection, Map<String, String> gatewayReferenceById, long token)
                throws SQLException {
            for (Map.Entry<String, String> confirm : gatewayReferenceById.entrySet()) {
                try (PreparedStatement s = connection.prepareStatement("UPDATE refund SET state = 'sent', gateway_reference = ? WHERE id = ?")) {
                    s.setString(1, confirm.getValue());
                    s.setString(2, confirm.getKey());
                    s.executeUpdate();
                }
            }
            return Map.of();
        }

        @Override
        public void fail(Connection connection, String id, long token, String reason) {
            throw new UnsupportedOperationException("the control only confirms");
        }

        @Override
        public void release(Connection connection, String id, long token) {
            throw new UnsupportedOperationException("the control only confirms");
        }
    }
}
