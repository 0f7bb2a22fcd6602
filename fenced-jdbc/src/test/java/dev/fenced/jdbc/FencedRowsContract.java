package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.FenceViolation;
import dev.fenced.testing.servers.OneConnectionPool;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The contract {@link FencedRows} keeps on every database: the article's rules, races on real
 * connections with a negative control, transactions and isolation. One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class FencedRowsContract {
    private final String tableName = "fenced_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private FencedRows rows;
    private DataSource dataSource;

    protected abstract DataSource createDataSource();

    @BeforeAll
    void createTable() throws SQLException {
        dataSource = createDataSource();
        execute("CREATE TABLE " + tableName + " (id VARCHAR(64) PRIMARY KEY, merchant VARCHAR(64) NOT NULL,"
                + " state VARCHAR(16) NOT NULL, fence BIGINT NOT NULL DEFAULT 0, note VARCHAR(200))");
        rows = FencedRows.of(FencedTable.builder(tableName).scopeColumn("merchant").states("pending", "sending", "sent").build());
    }

    @AfterAll
    void dropTable() throws SQLException {
        if (dataSource == null) {
            return; // the database was not configured and the class was skipped
        }
        execute("DROP TABLE " + tableName);
    }

    @BeforeEach
    void emptyTable() throws SQLException {
        execute("DELETE FROM " + tableName);
    }

    protected DataSource dataSource() {
        return dataSource;
    }

    @Test
    void aLowerTokenCannotClaimARowFencedHigher() throws SQLException {
        insert("r_1", "pending", 34);
        try (Connection c = dataSource.getConnection()) {
            FenceViolation violation = catchViolation(() -> rows.claim(c, "r_1", 33));
            assertThat(violation.tokenPresented()).isEqualTo(33);
            assertThat(violation.storedFence()).isEqualTo(34);
            assertThat(violation.storedState()).isEqualTo("pending");
            assertThat(violation.table()).isEqualTo(tableName);
            assertThat(violation.rowId()).isEqualTo("r_1");
            assertThatThrownBy(() -> rows.claim(c, "r_1", 34)).as("an equal token is stale too").isInstanceOf(FenceViolation.class);
        }
        assertRow("r_1", "pending", 34);
    }

    @Test
    void aNewHolderTakesOverASendingRowClaimedUnderALowerToken() throws SQLException {
        insert("r_815", "pending", 0);
        try (Connection c = dataSource.getConnection()) {
            rows.claim(c, "r_815", 33);
            assertRow("r_815", "sending", 33);
            rows.claim(c, "r_815", 34);
            assertRow("r_815", "sending", 34);
        }
    }

    @Test
    void onlyTheClaimingTokenCanConfirm() throws SQLException {
        insert("r_1", "pending", 0);
        try (Connection c = dataSource.getConnection()) {
            rows.claim(c, "r_1", 33);
            assertThatThrownBy(() -> rows.confirm(c, "r_1", 32)).isInstanceOf(FenceViolation.class);
            assertThatThrownBy(() -> rows.confirm(c, "r_1", 34)).isInstanceOf(FenceViolation.class);
            rows.confirm(c, "r_1", 33);
            assertRow("r_1", "sent", 33);
            assertThatThrownBy(() -> rows.confirm(c, "r_1", 33)).as("a second confirm").isInstanceOf(FenceViolation.class);
            assertThatThrownBy(() -> rows.claim(c, "r_1", 40)).as("a done row is never claimed again").isInstanceOf(FenceViolation.class);
        }
    }

    @Test
    void afterATakeoverTheOldHoldersConfirmIsRefused() throws SQLException {
        insert("r_815", "pending", 0);
        try (Connection a = dataSource.getConnection(); Connection b = dataSource.getConnection()) {
            rows.claim(a, "r_815", 33);
            rows.claim(b, "r_815", 34);
            rows.confirm(b, "r_815", 34, Map.of("note", "gw_1"));
            FenceViolation violation = catchViolation(() -> rows.confirm(a, "r_815", 33, Map.of("note", "gw_stale")));
            assertThat(violation.storedFence()).isEqualTo(34);
            assertThat(violation.storedState()).isEqualTo("sent");
        }
        assertRow("r_815", "sent", 34);
        assertThat(note("r_815")).isEqualTo("gw_1");
    }

    @Test
    void aMissingRowIsNotAViolation() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            assertThatThrownBy(() -> rows.claim(c, "nope", 1)).isInstanceOf(RowNotFoundException.class).hasMessageContaining("nope");
            assertThatThrownBy(() -> rows.confirm(c, "nope", 1)).isInstanceOf(RowNotFoundException.class);
        }
    }

    @Test
    void finishRejectsManagedOrInvalidColumnsAndWritesNothing() throws SQLException {
        insert("r_1", "pending", 0);
        try (Connection c = dataSource.getConnection()) {
            rows.claim(c, "r_1", 5);
            assertThatThrownBy(() -> rows.confirm(c, "r_1", 5, Map.of("fence", 99))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> rows.confirm(c, "r_1", 5, Map.of("note; DROP TABLE x", "x"))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> rows.finish(c, "r_1", 5, "sending", Map.of())).isInstanceOf(IllegalArgumentException.class);
            assertRow("r_1", "sending", 5);
            rows.finish(c, "r_1", 5, "failed", Map.of("note", "gateway said no"));
        }
        assertRow("r_1", "failed", 5);
        assertThat(note("r_1")).isEqualTo("gateway said no");
    }

    /**
     * SQL folds unquoted identifiers, so FENCE is the fence column: setting it through the extra
     * columns is refused whatever its case, and so is a target state that is the claimed state in
     * another case. Control: the same UPDATE written by hand does reset the fence, and a stale token
     * can then claim the row.
     */
    @Test
    void managedColumnsAndTheClaimedStateAreRecognisedWhateverTheirCase() throws SQLException {
        insert("r_1", "pending", 0);
        try (Connection c = dataSource.getConnection()) {
            rows.claim(c, "r_1", 5);
            for (String column : List.of("FENCE", "Fence", "STATE", "Id")) {
                assertThatThrownBy(() -> rows.confirm(c, "r_1", 5, Map.of(column, 0L))).as(column).isInstanceOf(IllegalArgumentException.class);
            }
            assertThatThrownBy(() -> rows.finish(c, "r_1", 5, "SENDING", Map.of())).isInstanceOf(IllegalArgumentException.class);
            assertRow("r_1", "sending", 5);
            update(c, "UPDATE " + tableName + " SET state = 'sent', FENCE = 0 WHERE id = ?", "r_1");
            update(c, "UPDATE " + tableName + " SET state = 'pending' WHERE id = ?", "r_1");
            rows.claim(c, "r_1", 2); // control: with the fence reset, a token below 5 owns the row again
        }
        assertRow("r_1", "sending", 2);
    }

    @Test
    void aBatchClaimSaysWhichRowsItClaimedAndWhichWereRefused() throws SQLException {
        insert("r_1", "pending", 0);
        insert("r_2", "sending", 50);
        insert("r_3", "sent", 1);
        insert("r_4", "sending", 3);
        try (Connection c = dataSource.getConnection()) {
            BatchClaim claim = rows.claimAll(c, List.of("r_1", "r_2", "r_3", "r_4", "r_missing", "r_1"), 10);
            assertThat(claim.claimed()).containsExactlyInAnyOrder("r_1", "r_4");
            assertThat(claim.refused()).containsExactly("r_2", "r_3", "r_missing");
            FenceViolation owned = (FenceViolation) claim.refusal("r_2").orElseThrow();
            assertThat(owned.storedFence()).isEqualTo(50);
            assertThat(owned.storedState()).isEqualTo("sending");
            assertThat(((FenceViolation) claim.refusal("r_3").orElseThrow()).storedState()).isEqualTo("sent");
            assertThat(claim.refusal("r_missing").orElseThrow()).isInstanceOf(RowNotFoundException.class);
            assertThat(claim.allClaimed()).isFalse();
            assertThatThrownBy(claim::requireAll).isInstanceOf(BatchRefusedException.class).hasMessageContaining("3 of 5");
            assertThat(rows.claimAll(c, List.of(), 11).allClaimed()).isTrue();
        }
        assertRow("r_1", "sending", 10);
        assertRow("r_2", "sending", 50);
        assertRow("r_4", "sending", 10);
    }

    @Test
    void aBatchConfirmWritesItsOwnRowsAndSaysWhyEachOtherWasRefused() throws SQLException {
        insert("r_1", "sending", 10);
        insert("r_2", "sending", 10);
        insert("r_3", "sending", 11);
        insert("r_4", "sent", 10);
        Map<String, Map<String, String>> batch = new LinkedHashMap<>();
        for (String id : List.of("r_4", "r_1", "r_missing", "r_3", "r_2")) {
            batch.put(id, Map.of("note", "gw_" + id));
        }
        BatchConfirm confirm;
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            confirm = rows.confirmAll(c, batch, 10);
            c.commit();
            c.setAutoCommit(true);
        }
        assertThat(confirm.confirmed()).containsExactlyInAnyOrder("r_1", "r_2");
        assertThat(confirm.refusals()).containsOnlyKeys("r_3", "r_4", "r_missing");
        FenceViolation takenOver = (FenceViolation) confirm.refusal("r_3").orElseThrow();
        assertThat(takenOver.storedFence()).isEqualTo(11);
        assertThat(takenOver.storedState()).isEqualTo("sending");
        assertThat(((FenceViolation) confirm.refusal("r_4").orElseThrow()).storedState()).isEqualTo("sent");
        assertThat(confirm.refusal("r_missing").orElseThrow()).isInstanceOf(RowNotFoundException.class);
        assertThatThrownBy(confirm::requireAll).isInstanceOf(FenceViolation.class);
        assertRow("r_1", "sent", 10);
        assertRow("r_2", "sent", 10);
        assertThat(note("r_2")).isEqualTo("gw_r_2");
        assertRow("r_3", "sending", 11);
        assertThat(note("r_3")).isNull();

        // Negative control: the same UPDATE without the fence predicate takes the row the fence kept.
        try (Connection c = dataSource.getConnection()) {
            assertThat(update(c, "UPDATE " + tableName + " SET state = 'sent', note = 'gw_stale' WHERE id = ? AND state = 'sending'", "r_3"))
                    .isTrue();
        }
    }

    /**
     * The rows of several holders in one batch, each under its own token: a stale holder's confirm
     * of r_1 (33) is refused while the current holder's (34) lands, whichever comes first in the
     * batch; two rows under 7 land with them. Control: the stale write without the fence predicate
     * takes the row.
     */
    @Test
    void aBatchOfSeveralHoldersConfirmsEachRowUnderItsOwnToken() throws SQLException {
        insert("r_1", "sending", 34);
        insert("r_2", "sending", 7);
        insert("r_3", "sending", 7);
        Map<Long, Map<String, Map<String, String>>> batch = new LinkedHashMap<>();
        batch.put(33L, Map.of("r_1", Map.of("note", "gw_stale")));
        batch.put(7L, Map.of("r_2", Map.of("note", "gw_2"), "r_3", Map.of("note", "gw_3")));
        batch.put(34L, Map.of("r_1", Map.of("note", "gw_new")));
        Map<Long, BatchConfirm> answers;
        try (Connection c = dataSource.getConnection()) {
            answers = rows.confirmEach(c, batch, Duration.ofSeconds(1));
            assertThatThrownBy(() -> rows.confirmEach(c, batch, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(answers).containsOnlyKeys(33L, 7L, 34L);
        assertThat(answers.get(34L).confirmed()).containsExactly("r_1");
        assertThat(answers.get(33L).confirmed()).isEmpty();
        assertThat(((FenceViolation) answers.get(33L).refusal("r_1").orElseThrow()).storedFence()).isEqualTo(34);
        assertThat(answers.get(7L).confirmed()).containsExactlyInAnyOrder("r_2", "r_3");
        assertRow("r_1", "sent", 34);
        assertThat(note("r_1")).isEqualTo("gw_new");
        assertRow("r_3", "sent", 7);

        // Negative control: the same UPDATE without the fence predicate lets the stale holder's reference in.
        try (Connection c = dataSource.getConnection()) {
            assertThat(update(c, "UPDATE " + tableName + " SET note = 'gw_stale' WHERE id = ? AND state = 'sent'", "r_1")).isTrue();
        }
    }

    @Test
    void aBatchConfirmWithMismatchedColumnsWritesNothing() throws SQLException {
        insert("r_1", "sending", 10);
        insert("r_2", "sending", 10);
        Map<String, Map<String, String>> batch = new LinkedHashMap<>();
        batch.put("r_1", Map.of("note", "gw_1"));
        batch.put("r_2", Map.of());
        try (Connection c = dataSource.getConnection()) {
            assertThatThrownBy(() -> rows.confirmAll(c, batch, 10)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("same columns");
            assertThatThrownBy(() -> rows.confirmAll(c, Map.of("r_1", Map.of("fence", 99)), 10)).isInstanceOf(IllegalArgumentException.class);
            assertThat(rows.confirmAll(c, Map.of(), 10).allConfirmed()).isTrue();
        }
        assertRow("r_1", "sending", 10);
        assertRow("r_2", "sending", 10);
    }

    @Test
    void aClaimInsideATransactionThatRollsBackLeavesTheRowAsItWas() throws SQLException {
        insert("r_1", "pending", 7);
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            rows.claim(c, "r_1", 8);
            rows.confirm(c, "r_1", 8);
            c.rollback();
            c.setAutoCommit(true);
        }
        assertRow("r_1", "pending", 7);
    }

    @ParameterizedTest(name = "{0} connections")
    @ValueSource(ints = {2, 8})
    void racingHoldersEachRowEndsOwnedByExactlyOneTokenAndTheHighestClaimerWins(int connections) throws Exception {
        RaceResult result = race(connections, 20, 25, true);
        assertThat(result.violations).as("rows owned by more than one token or lost to a lower one: %s", result.examples).isZero();
        assertThat(result.takeovers).as("takeovers seen: the race really interleaved").isPositive();
    }

    @ParameterizedTest(name = "negative control, {0} connections")
    @ValueSource(ints = {2, 8})
    void negativeControl_withoutTheFenceRacingHoldersDoubleOwnRows(int connections) throws Exception {
        RaceResult result = race(connections, 20, 25, false);
        assertThat(result.violations).as("the same race with unfenced UPDATEs must show double ownership").isPositive();
    }

    @Test
    void aDeadlockIsARetryableConflictNotAViolation() throws Exception {
        insert("r_a", "pending", 0);
        insert("r_b", "pending", 0);
        try (Connection one = dataSource.getConnection(); Connection two = dataSource.getConnection()) {
            one.setAutoCommit(false);
            two.setAutoCommit(false);
            rows.claim(one, "r_a", 1);
            rows.claim(two, "r_b", 2);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                // Whichever claim reaches the database first waits for the other's row lock; the second
                // closes the cycle, so the two deadlock in either order and need no head start.
                Future<Throwable> first = pool.submit(() -> attempt(() -> rows.claim(one, "r_b", 1)));
                Future<Throwable> second = pool.submit(() -> attempt(() -> rows.claim(two, "r_a", 2)));
                List<Throwable> outcomes = new ArrayList<>();
                outcomes.add(first.get(60, TimeUnit.SECONDS));
                outcomes.add(second.get(60, TimeUnit.SECONDS));
                assertThat(outcomes).filteredOn(e -> e instanceof SerializationConflictException)
                        .as("one side of the deadlock: %s", outcomes).hasSize(1);
                assertThat(outcomes).noneMatch(e -> e instanceof FenceViolation);
            } finally {
                one.rollback();
                two.rollback();
                pool.shutdownNow();
            }
        }
        assertRow("r_a", "pending", 0);
    }

    /** The library migrates its own table only, and a second migration (every process runs one) finds nothing to do. */
    @Test
    void theLibrarysMigrationMakesTheCounterTableAndIsSafeToRepeat() throws SQLException {
        FencedSchema.migrate(dataSource);
        FencedSchema.migrate(dataSource);
        try (Connection c = dataSource.getConnection(); java.sql.Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + FencedSchema.COUNTER_TABLE)) {
            assertThat(rs.next()).isTrue();
        }
        assertThat(getClass().getClassLoader().getResource(FencedSchema.SCRIPTS + "/postgresql/V1__fence_counter.sql"))
                .as("the scripts are published for other migration tools").isNotNull();
        assertThat(getClass().getClassLoader().getResource(FencedSchema.SCRIPTS + "/mariadb/V1__fence_counter.sql")).isNotNull();
    }

    /**
     * The DataSource overloads on a pool that hands out connections in manual commit and takes them
     * back as they are: each write is committed (another connection sees it), and the connection
     * goes back in manual commit, refused writes included. Without the restore, the next borrower
     * of the connection would run in auto-commit, each of its statements committed on its own.
     */
    @Test
    void theDataSourceOverloadsCommitAndGiveTheConnectionBackAsTheyFoundIt() throws SQLException {
        insert("r_1", "pending", 0);
        insert("r_2", "pending", 0);
        insert("r_3", "pending", 9);
        try (Connection pooled = dataSource.getConnection()) {
            pooled.setAutoCommit(false);
            DataSource pool = OneConnectionPool.of(pooled);
            rows.claim(pool, "r_1", 5);
            assertThat(pooled.getAutoCommit()).as("after a claim").isFalse();
            rows.confirm(pool, "r_1", 5, Map.of("note", "paid"));
            assertThat(pooled.getAutoCommit()).as("after a confirm").isFalse();
            assertThat(rows.claimAll(pool, List.of("r_2", "r_3"), 5).claimed()).containsExactly("r_2");
            assertThat(pooled.getAutoCommit()).as("after a batch claim with a refusal").isFalse();
            assertThatThrownBy(() -> rows.claim(pool, "r_3", 5)).isInstanceOf(FenceViolation.class);
            assertThat(pooled.getAutoCommit()).as("after a refused claim").isFalse();
            pooled.rollback(); // what a pool does to a connection in manual commit that comes back: the writes must not depend on it
        }
        assertRow("r_1", "sent", 5);
        assertThat(note("r_1")).isEqualTo("paid");
        assertRow("r_2", "sending", 5);
        assertRow("r_3", "pending", 9);
    }

    // ---- the race ----

    /**
     * A holder stalled inside its claim transaction keeps the row locked, and the next holder's claim
     * waits for it. With the session's lock wait bounded ({@link JdbcDialect#boundWaits}) the claim
     * gives up after the bound with a {@link DatabaseWaitException} and changes nothing. Control:
     * without the bound it is still waiting after three times the bound, and takes the row over
     * once the stalled holder commits.
     */
    @ParameterizedTest(name = "lock wait bounded: {0}")
    @ValueSource(booleans = {true, false})
    void aClaimBehindAStalledHoldersRowLockGivesUpAfterTheSessionsLockWait(boolean bounded) throws Exception {
        insert("r_1", "pending", 0);
        long bound = 1_000; // MariaDB counts whole seconds
        ExecutorService next = Executors.newSingleThreadExecutor();
        try (Connection stalled = dataSource.getConnection(); Connection c = dataSource.getConnection()) {
            stalled.setAutoCommit(false);
            rows.claim(stalled, "r_1", 33); // claimed, locked, not committed: the holder stalls here
            if (bounded) {
                try (Statement s = c.createStatement()) {
                    s.execute(JdbcDialect.detect(c).boundWaits(Duration.ofMillis(bound), Duration.ZERO).orElseThrow());
                }
            }
            c.setAutoCommit(false);
            long start = System.nanoTime();
            Future<BatchClaim> claim = next.submit(() -> rows.claimAll(c, List.of("r_1"), 34));
            Throwable ended = endedWithin(claim, 3 * bound);
            if (bounded) {
                long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertThat(ended).as("the claim gave up within three times the bound").isInstanceOf(DatabaseWaitException.class);
                DatabaseWaitException wait = (DatabaseWaitException) ended;
                assertThat(wait.kind()).isEqualTo(DatabaseWaitException.Kind.LOCK);
                assertThat(wait.getMessage()).contains("batch claim of 1 rows in " + tableName, "gave up waiting for a row lock");
                assertThat(waited).as("it waited for the bound").isGreaterThanOrEqualTo(bound - 100);
                c.rollback();
                stalled.rollback();
                assertRow("r_1", "pending", 0);
            } else {
                assertThat(ended).as("control: still waiting after three times the bound").isInstanceOf(TimeoutException.class);
                stalled.commit();
                assertThat(claim.get(30, TimeUnit.SECONDS).claimed()).as("the row taken over once the lock is gone").containsExactly("r_1");
                c.commit();
                assertRow("r_1", "sending", 34);
            }
        } finally {
            next.shutdownNow();
        }
    }

    /** What ended {@code future} within {@code millis}: its exception, a {@link TimeoutException} when it had not ended, null for a result. */
    private static Throwable endedWithin(Future<?> future, long millis) throws InterruptedException {
        try {
            future.get(millis, TimeUnit.MILLISECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (TimeoutException e) {
            return e;
        }
    }

    private record RaceResult(int violations, int takeovers, List<String> examples) {
    }

    private RaceResult race(int connections, int rowCount, int rounds, boolean fenced) throws Exception {
        int violations = 0;
        int takeovers = 0;
        List<String> examples = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(connections);
        List<Connection> open = new ArrayList<>();
        try {
            for (int i = 0; i < connections; i++) {
                open.add(dataSource.getConnection());
            }
            for (int round = 0; round < rounds; round++) {
                resetRaceRows(open.get(0), rowCount);
                Map<String, Set<Long>> claimers = new ConcurrentHashMap<>();
                Map<String, List<Long>> confirmers = new ConcurrentHashMap<>();
                CyclicBarrier start = new CyclicBarrier(connections);
                // Every holder's claim of a row comes before any holder's confirm of it, as when each
                // one's gateway call outlasts the others' claims: the widest overlap, in every round.
                CyclicBarrier claimsDone = new CyclicBarrier(connections);
                List<Future<?>> futures = new ArrayList<>();
                for (int w = 0; w < connections; w++) {
                    Connection connection = open.get(w);
                    long token = w + 1;
                    futures.add(pool.submit(() -> {
                        start.await();
                        for (int r = 0; r < rowCount; r++) {
                            String id = "row_" + r;
                            boolean claimed = claim(connection, id, token, fenced);
                            if (claimed) {
                                claimers.computeIfAbsent(id, k -> ConcurrentHashMap.newKeySet()).add(token);
                            }
                            claimsDone.await(1, TimeUnit.MINUTES);
                            if (claimed) {
                                if (confirm(connection, id, token, fenced)) {
                                    confirmers.computeIfAbsent(id, k -> new java.util.concurrent.CopyOnWriteArrayList<>()).add(token);
                                }
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> future : futures) {
                    future.get(2, TimeUnit.MINUTES);
                }
                for (int r = 0; r < rowCount; r++) {
                    String id = "row_" + r;
                    List<Long> confirmed = confirmers.getOrDefault(id, List.of());
                    Set<Long> claimed = claimers.getOrDefault(id, Set.of());
                    if (claimed.size() > 1) {
                        takeovers++;
                    }
                    long highestClaimer = claimed.stream().mapToLong(Long::longValue).max().orElse(-1);
                    boolean ok = confirmed.size() == 1 && confirmed.get(0) == highestClaimer && fenceOf(id) == highestClaimer;
                    if (!ok) {
                        violations++;
                        if (examples.size() < 5) {
                            examples.add(id + " claimed by " + claimed + " confirmed by " + confirmed);
                        }
                    }
                }
            }
        } finally {
            for (Connection connection : open) {
                connection.close();
            }
            pool.shutdownNow();
        }
        return new RaceResult(violations, takeovers, examples);
    }

    private void resetRaceRows(Connection connection, int rowCount) throws SQLException {
        update(connection, "DELETE FROM " + tableName);
        try (PreparedStatement statement = connection.prepareStatement(
                "INSERT INTO " + tableName + " (id, merchant, state, fence) VALUES (?, 'm_race', 'pending', 0)")) {
            for (int r = 0; r < rowCount; r++) {
                statement.setString(1, "row_" + r);
                statement.addBatch();
            }
            statement.executeBatch();
        }
    }

    private boolean claim(Connection connection, String id, long token, boolean fenced) throws SQLException {
        if (fenced) {
            try {
                rows.claim(connection, id, token);
                return true;
            } catch (FenceViolation refused) {
                return false;
            }
        }
        // What a worker without a fence writes: the state machine alone.
        return update(connection, "UPDATE " + tableName + " SET state = 'sending', fence = ? WHERE id = ? AND state IN ('pending', 'sending')", token, id);
    }

    private boolean confirm(Connection connection, String id, long token, boolean fenced) throws SQLException {
        if (fenced) {
            try {
                rows.confirm(connection, id, token);
                return true;
            } catch (FenceViolation refused) {
                return false;
            }
        }
        return update(connection, "UPDATE " + tableName + " SET state = 'sent' WHERE id = ? AND state = 'sending'", id);
    }

    // ---- helpers ----

    private static Throwable attempt(Runnable action) {
        try {
            action.run();
            return null;
        } catch (Throwable e) {
            return e;
        }
    }

    private static FenceViolation catchViolation(Runnable action) {
        Throwable thrown = attempt(action);
        assertThat(thrown).isInstanceOf(FenceViolation.class);
        return (FenceViolation) thrown;
    }

    private boolean update(Connection connection, String sql, Object... params) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                statement.setObject(i + 1, params[i]);
            }
            return statement.executeUpdate() >= 1;
        }
    }

    protected void execute(String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement statement = c.createStatement()) {
            statement.execute(sql);
        }
    }

    private void insert(String id, String state, long fence) throws SQLException {
        insert(id, state, fence, "m_1");
    }

    private void insert(String id, String state, long fence, String merchant) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            update(c, "INSERT INTO " + tableName + " (id, merchant, state, fence) VALUES (?, ?, ?, ?)", id, merchant, state, fence);
        }
    }

    private long fenceOf(String id) throws SQLException {
        return (Long) query("SELECT fence FROM " + tableName + " WHERE id = ?", id).get(1);
    }

    private String note(String id) throws SQLException {
        return (String) query("SELECT note FROM " + tableName + " WHERE id = ?", id).get(1);
    }

    private void assertRow(String id, String state, long fence) throws SQLException {
        List<Object> row = query("SELECT state, fence FROM " + tableName + " WHERE id = ?", id);
        assertThat(row.get(1)).as("state of %s", id).isEqualTo(state);
        assertThat(((Number) row.get(2)).longValue()).as("fence of %s", id).isEqualTo(fence);
    }

    /** One row, as a list indexed from 1 like JDBC columns. */
    private List<Object> query(String sql, Object param) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement statement = c.prepareStatement(sql)) {
            statement.setObject(1, param);
            try (ResultSet rs = statement.executeQuery()) {
                assertThat(rs.next()).as("row found by %s", sql).isTrue();
                List<Object> row = new ArrayList<>();
                row.add(null);
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    Object value = rs.getObject(i);
                    row.add(value instanceof Number n && !(value instanceof java.math.BigDecimal) ? (Object) n.longValue() : value);
                }
                return row;
            }
        }
    }
}
