package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FenceViolation;
import dev.fenced.FencedException;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The confirms of several runs written in one batch ({@link SharedConfirms}), against a real
 * database: each row is fenced by its own run's token, and one run's refused row or lock wait
 * holds up no other run for longer than the batch's bound. One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SharedConfirmsContract {
    private static final SettlementWorker.PhaseHook NO_HOOK = (phase, subject) -> { };
    private static final Duration WAIT = Duration.ofSeconds(1);

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
     * merchant's r_b (token 7) and a fourth run's of its merchant's r_c (token 34, the same number
     * as the first: each merchant counts its own). The stale one is refused, the others land. Control:
     * the same batch with writes that do not check the token lets the stale run's reference
     * overwrite the new run's, and nothing is refused.
     */
    @ParameterizedTest(name = "fencing off: {0}")
    @ValueSource(booleans = {false, true})
    void eachRunsRowsInOneBatchAreFencedByThatRunsToken(boolean control) throws SQLException {
        String a = sendingRow(34);
        String b = sendingRow(7);
        String c = sendingRow(34);
        RefundWrites writes = control ? new TokenBlindWrites() : RefundWrites.fenced();
        RunWrites current = new RunWrites(db, writes, 34, NO_HOOK);
        RunWrites stale = new RunWrites(db, writes, 33, NO_HOOK);
        RunWrites other = new RunWrites(db, writes, 7, NO_HOOK);
        RunWrites sameNumber = new RunWrites(db, writes, 34, NO_HOOK); // a third merchant's counter is at 34 too
        Map<SharedConfirms.Entry, String> batch = new LinkedHashMap<>();
        batch.put(new SharedConfirms.Entry(current, a), "gw_new");
        batch.put(new SharedConfirms.Entry(other, b), "gw_b");
        batch.put(new SharedConfirms.Entry(stale, a), "gw_stale");
        batch.put(new SharedConfirms.Entry(sameNumber, c), "gw_c");

        Map<SharedConfirms.Entry, FencedException> refusals = SharedConfirms.write(batch, WAIT);

        assertThat(row(b)).containsExactly("sent", "gw_b");
        assertThat(row(c)).containsExactly("sent", "gw_c");
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
     * A batch that the database refuses (a reference longer than its column) fails whole, and no
     * caller hears that failure: each confirm is written again by itself, so the other run's row is
     * {@code sent} and only the refused one stays {@code sending}, for its next holder to look up.
     * On MariaDB the batch may have written the first row before it failed: written again, that row
     * is found {@code sent} under its own token, and confirmed.
     */
    @Test
    void aConfirmTheDatabaseRefusesFailsAloneAndTheOthersAreWrittenByThemselves() throws SQLException {
        String a = sendingRow(34);
        String b = sendingRow(7);
        RunWrites runA = new RunWrites(db, RefundWrites.fenced(), 34, NO_HOOK);
        RunWrites runB = new RunWrites(db, RefundWrites.fenced(), 7, NO_HOOK);
        Map<SharedConfirms.Entry, String> batch = new LinkedHashMap<>();
        batch.put(new SharedConfirms.Entry(runA, a), "gw_a");
        batch.put(new SharedConfirms.Entry(runB, b), "x".repeat(65));

        assertThatThrownBy(() -> SharedConfirms.write(batch, WAIT)).isInstanceOf(SharedConfirms.WriteAlone.class);

        assertThat(runA.writeConfirmAgain(a, "gw_a")).as("confirmed, by the batch or by itself").isEmpty();
        assertThatThrownBy(() -> runB.writeConfirmAgain(b, "x".repeat(65))).isInstanceOfAny(SQLException.class, FencedException.class);
        assertThat(row(a)).containsExactly("sent", "gw_a");
        assertThat(row(b)).containsExactly("sending", null);
    }

    /**
     * A confirm written again after its batch failed: a row the batch wrote under the run's own
     * token, or that the provider's word moved on since, is confirmed; a row sent under another
     * token is refused, as in any batch.
     */
    @ParameterizedTest(name = "row {0} under token {1}")
    @org.junit.jupiter.params.provider.CsvSource({"sent, 34, true", "settled, 34, true", "sent, 35, false", "sending, 35, false"})
    void aConfirmWrittenAgainIsConfirmedOnlyWhenItsOwnTokenWroteIt(String state, long fence, boolean confirmed) throws SQLException {
        String a = sendingRow(fence);
        try (Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("UPDATE refund SET state = ?, gateway_reference = 'gw_a' WHERE id = ?")) {
            s.setString(1, state);
            s.setString(2, a);
            assertThat(s.executeUpdate()).isEqualTo(1);
        }

        Optional<FencedException> refusal = new RunWrites(db, RefundWrites.fenced(), 34, NO_HOOK).writeConfirmAgain(a, "gw_a");

        if (confirmed) {
            assertThat(refusal).isEmpty();
        } else {
            assertThat(refusal).get().isInstanceOfSatisfying(FenceViolation.class, v -> assertThat(v.storedFence()).isEqualTo(fence));
        }
        assertThat(row(a)).containsExactly(state, "gw_a");
    }

    /**
     * A batch that finds its row already holding what it writes: with a driver that counts no rows
     * (MariaDB's bulk protocol) the batch reads its rows back, and a webhook may settle a row
     * between the write and that read; the row as it then stands is set up here. Confirmed under
     * the run's own token with the confirm's own reference, sent or moved on by the provider, it
     * is confirmed, in a batch of several runs and in a run's own batch, not reported as a
     * violation that would stop the run. Controls: another reference under the same token (a
     * holder granted the token twice, and a second refund), another token, a state the confirm
     * does not lead to: refused.
     */
    @ParameterizedTest(name = "row {0} under token {1} with {2}")
    @org.junit.jupiter.params.provider.CsvSource({"settled, 34, gw_a, true", "returned, 34, gw_a, true", "sent, 34, gw_a, true",
            "sent, 34, gw_twice, false", "settled, 35, gw_a, false", "settled, 33, gw_a, false", "failed, 34, gw_a, false",
            "pending, 34, gw_a, false"})
    void aBatchThatFindsItsRowAlreadyConfirmedUnderItsOwnTokenConfirmsIt(String state, long fence, String reference, boolean confirmed)
            throws SQLException {
        String together = sendingRow(fence);
        String alone = sendingRow(fence);
        try (Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("UPDATE refund SET state = ?, gateway_reference = ? WHERE id IN (?, ?)")) {
            s.setString(1, state);
            s.setString(2, reference);
            s.setString(3, together);
            s.setString(4, alone);
            assertThat(s.executeUpdate()).isEqualTo(2);
        }
        RunWrites run = new RunWrites(db, RefundWrites.fenced(), 34, NO_HOOK);
        RunWrites sameNumber = new RunWrites(db, RefundWrites.fenced(), 34, NO_HOOK); // another merchant's counter at 34 too
        RunWrites other = new RunWrites(db, RefundWrites.fenced(), 7, NO_HOOK);
        String c = sendingRow(34);
        String b = sendingRow(7);
        Map<SharedConfirms.Entry, String> batch = new LinkedHashMap<>();
        batch.put(new SharedConfirms.Entry(sameNumber, c), "gw_c"); // first: each run's refusals are checked against its own references
        batch.put(new SharedConfirms.Entry(run, together), "gw_a");
        batch.put(new SharedConfirms.Entry(other, b), "gw_b");

        Map<SharedConfirms.Entry, FencedException> refusedTogether = SharedConfirms.write(batch, WAIT);
        Map<String, FencedException> refusedAlone = run.writeConfirms(Map.of(alone, "gw_a"));

        assertThat(row(b)).containsExactly("sent", "gw_b");
        assertThat(row(c)).containsExactly("sent", "gw_c");
        if (confirmed) {
            assertThat(refusedTogether).isEmpty();
            assertThat(refusedAlone).isEmpty();
        } else {
            assertThat(refusedTogether).containsOnlyKeys(new SharedConfirms.Entry(run, together));
            assertThat(refusedTogether.get(new SharedConfirms.Entry(run, together))).isInstanceOfSatisfying(FenceViolation.class,
                    v -> assertThat(v.storedFence()).isEqualTo(fence));
            assertThat(refusedAlone.get(alone)).isInstanceOfSatisfying(FenceViolation.class, v -> assertThat(v.storedFence()).isEqualTo(fence));
        }
        assertThat(row(together)).containsExactly(state, reference);
        assertThat(row(alone)).containsExactly(state, reference);
    }

    /**
     * Another process holds a lock on run A's row (its claim, stopped half-way). Run A's confirm
     * waits for it; run B's confirm, queued behind A's batch on the one committer, is written once
     * that batch gives up, and A's waits by itself. When the lock goes, A's confirm lands. Control:
     * a batch with no bound of its own keeps B waiting for as long as the lock is held.
     */
    @ParameterizedTest(name = "batch unbounded: {0}")
    @ValueSource(booleans = {false, true})
    void aRowLockedByAnotherProcessHoldsUpOnlyItsOwnRun(boolean control) throws Exception {
        String a = sendingRow(34);
        String b = sendingRow(7);
        RunWrites runA = new RunWrites(db, RefundWrites.fenced(), 34, NO_HOOK);
        RunWrites runB = new RunWrites(db, RefundWrites.fenced(), 7, NO_HOOK);
        SharedConfirms shared = new SharedConfirms(control ? Duration.ofMinutes(10) : WAIT);
        ExecutorService callers = Executors.newFixedThreadPool(2);
        try (Connection locker = db.getConnection()) {
            locker.setAutoCommit(false);
            try (PreparedStatement lock = locker.prepareStatement("SELECT id FROM refund WHERE id = ? FOR UPDATE")) {
                lock.setString(1, a);
                lock.executeQuery().close();
            }
            try {
                Future<Optional<FencedException>> confirmA = callers.submit(() -> shared.confirm(runA, a, "gw_a"));
                // B must queue behind A's batch: wait until A's confirm is inside the database, waiting for the lock.
                await("run A's confirm waiting for the row lock").atMost(Duration.ofSeconds(10)).until(this::aConfirmWaitsForARowLock);
                Future<Optional<FencedException>> confirmB = callers.submit(() -> shared.confirm(runB, b, "gw_b"));
                if (control) {
                    assertThatThrownBy(() -> await().atMost(Duration.ofSeconds(4)).until(confirmB::isDone))
                            .as("without a bound, B waits on A's lock").isInstanceOf(ConditionTimeoutException.class);
                    return;
                }
                // The bound is one second; ten leave room for a slow machine.
                assertThat(confirmB.get(10, TimeUnit.SECONDS)).isEmpty();
                assertThat(row(b)).containsExactly("sent", "gw_b");
                assertThat(confirmA).as("A waits for the lock by itself").isNotDone();
                locker.rollback();
                assertThat(confirmA.get(10, TimeUnit.SECONDS)).isEmpty();
                assertThat(row(a)).containsExactly("sent", "gw_a");
            } finally {
                locker.rollback();
            }
        } finally {
            callers.shutdown();
            assertThat(callers.awaitTermination(30, TimeUnit.SECONDS)).as("every confirm returned once the lock went").isTrue();
        }
    }

    /** True while an UPDATE of the refund table waits for a row lock, as the database's own views show it. */
    protected abstract boolean aConfirmWaitsForARowLock(Connection connection) throws SQLException;

    private boolean aConfirmWaitsForARowLock() throws SQLException {
        try (Connection c = db.getConnection()) {
            return aConfirmWaitsForARowLock(c);
        }
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
