package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FenceViolation;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link FencedTransactions} on one database: arbitrary inserts and updates into an application's
 * own tables, with no fence column, committed only under the newest token; each safety test has
 * its control with the guard off.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class FencedTransactionsContract {
    private static final String LEDGER = "fenced_tx_ledger";
    private static final String TALLY = "fenced_tx_tally";

    private HikariDataSource pool;
    private final FencedTransactions fences = FencedTransactions.create();

    /** A JDBC URL of the database under test. */
    protected abstract String jdbcUrl();

    /** The DDL of the ledger table: id, resource, token, phase, amount; no fence column. */
    protected abstract String ledgerDdl();

    @BeforeAll
    void open() throws SQLException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setMaximumPoolSize(24);
        pool = new HikariDataSource(config);
        FencedSchema.migrate(pool);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute(ledgerDdl());
            s.execute("CREATE TABLE IF NOT EXISTS " + TALLY + " (holder VARCHAR(80) PRIMARY KEY, n BIGINT NOT NULL)");
        }
    }

    @AfterAll
    void close() {
        if (pool != null) {
            pool.close();
        }
    }

    private static String freshResource() {
        return "tx:" + UUID.randomUUID();
    }

    /** One holder's transaction: a ledger line and its own tally row, entered (or not: the control) under its token. */
    private void write(Connection c, String resource, long token, String phase, boolean guarded) throws SQLException {
        if (guarded) {
            fences.enter(c, resource, token);
        }
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + LEDGER + " (resource, token, phase, amount) VALUES (?, ?, ?, 70.25)")) {
            insert.setString(1, resource);
            insert.setLong(2, token);
            insert.setString(3, phase);
            insert.executeUpdate();
        }
        String holder = resource + "#" + token + "#" + Thread.currentThread().getId();
        try (PreparedStatement update = c.prepareStatement("UPDATE " + TALLY + " SET n = n + 1 WHERE holder = ?")) {
            update.setString(1, holder);
            if (update.executeUpdate() == 0) {
                try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + TALLY + " (holder, n) VALUES (?, 1)")) {
                    insert.setString(1, holder);
                    insert.executeUpdate();
                }
            }
        }
    }

    private long count(String where, Object... args) throws SQLException {
        try (Connection c = pool.getConnection(); PreparedStatement s = c.prepareStatement("SELECT COUNT(*) FROM " + LEDGER + " WHERE " + where)) {
            for (int i = 0; i < args.length; i++) {
                s.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private long tallied(String resource, long token) throws SQLException {
        try (Connection c = pool.getConnection(); PreparedStatement s = c.prepareStatement("SELECT COALESCE(SUM(n), 0) FROM " + TALLY + " WHERE holder LIKE ?")) {
            s.setString(1, resource + "#" + token + "#%");
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private Connection begin(int isolation) throws SQLException {
        Connection c = pool.getConnection();
        c.setAutoCommit(false);
        c.setTransactionIsolation(isolation);
        return c;
    }

    /** What the race saw: transactions of the stale holder begun after the takeover, and how they ended. */
    private record Race(long staleAfterTakeoverCommitted, long staleRefused, long staleConflicts, long freshCommitted) {
    }

    /**
     * Holder A (token 1) writes from 4 threads without pause; holder B (token 2) takes over and
     * writes too. Every transaction A begins after B's first commit returned must not commit.
     */
    /** How a holder's transaction is fenced: not at all (the control), entered first, or checked with its commit. */
    enum Guard { OFF, ENTER, AT_COMMIT }

    /** One holder's transaction, fenced as {@code guard} says, committed. */
    private void transaction(Connection c, String resource, long token, String phase, Guard guard) throws SQLException {
        transaction(fences, c, resource, token, phase, guard);
    }

    private void transaction(FencedTransactions holder, Connection c, String resource, long token, String phase, Guard guard)
            throws SQLException {
        if (guard == Guard.ENTER) {
            holder.enter(c, resource, token);
        }
        write(c, resource, token, phase, false);
        if (guard == Guard.AT_COMMIT) {
            holder.commit(c, resource, token);
        } else {
            c.commit();
        }
    }

    private Race race(String resource, int isolation, Guard guard) throws Exception {
        FencedTransactions newHolder = FencedTransactions.create();
        AtomicBoolean takenOver = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger conflicts = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(5);
        List<Future<?>> stale = new ArrayList<>();
        CountDownLatch warmedUp = new CountDownLatch(40);
        CountDownLatch triedAfterTakeover = new CountDownLatch(20);
        for (int t = 0; t < 4; t++) {
            stale.add(threads.submit(() -> {
                while (!stop.get()) {
                    String phase = takenOver.get() ? "after" : "before";
                    if (phase.equals("after")) {
                        triedAfterTakeover.countDown();
                    }
                    try (Connection c = begin(isolation)) {
                        try {
                            transaction(c, resource, 1, phase, guard);  // holder A: this test's instance
                        } catch (FenceViolation v) {
                            refused.incrementAndGet();
                        } catch (SerializationConflictException e) {
                            conflicts.incrementAndGet();
                            c.rollback();
                        } catch (SQLException e) {
                            if (!pool.isClosed()) {
                                c.rollback();
                                if (e.getSQLState() != null && e.getSQLState().startsWith("40")) {
                                    conflicts.incrementAndGet(); // the control's own conflicts, without the guard's translation
                                    continue;
                                }
                                throw e;
                            }
                        }
                    }
                    warmedUp.countDown();
                }
                return null;
            }));
        }
        assertThat(warmedUp.await(60, TimeUnit.SECONDS)).as("holder A committed transactions before the takeover").isTrue();
        int freshCommits = 0;
        for (int i = 0; i < 20; i++) {
            try (Connection c = begin(isolation)) {
                try {
                    transaction(newHolder, c, resource, 2, "fresh", guard);  // holder B: a process of its own
                    freshCommits++;
                    takenOver.set(true); // B's first commit has returned: from here A's new transactions are stale
                } catch (SerializationConflictException e) {
                    c.rollback();
                } catch (SQLException e) {
                    c.rollback();
                    if (e.getSQLState() == null || !e.getSQLState().startsWith("40")) {
                        throw e;
                    }
                }
            }
        }
        assertThat(triedAfterTakeover.await(60, TimeUnit.SECONDS)).as("holder A began transactions after the takeover").isTrue();
        stop.set(true);
        for (Future<?> f : stale) {
            f.get(60, TimeUnit.SECONDS);
        }
        threads.shutdown();
        return new Race(count("resource = ? AND token = 1 AND phase = 'after'", resource), refused.get(), conflicts.get(), freshCommits);
    }

    @ParameterizedTest(name = "isolation {0}, guard {1}")
    @CsvSource({"2, ENTER", "4, ENTER", "2, AT_COMMIT", "4, AT_COMMIT"}) // 2 READ COMMITTED, 4 REPEATABLE READ
    void noTransactionOfAStaleTokenBegunAfterTheTakeoverCommits(int isolation, Guard guard) throws Exception {
        String resource = freshResource();
        Race race = race(resource, isolation, guard);
        assertThat(race.freshCommitted()).as("the new holder commits").isPositive();
        assertThat(race.staleAfterTakeoverCommitted()).as("stale transactions committed after the takeover: %s", race).isZero();
        assertThat(race.staleRefused() + race.staleConflicts()).as("the stale holder was refused: %s", race).isPositive();
        // whole transactions: every committed ledger line has its tally update, and no more
        assertThat(tallied(resource, 1)).isEqualTo(count("resource = ? AND token = 1", resource));
        assertThat(tallied(resource, 2)).isEqualTo(count("resource = ? AND token = 2", resource));
    }

    /** The control: the same race with the guard off commits the stale holder's transactions. */
    @ParameterizedTest(name = "isolation {0}")
    @ValueSource(ints = {Connection.TRANSACTION_READ_COMMITTED, Connection.TRANSACTION_REPEATABLE_READ})
    void controlWithoutTheGuardStaleTransactionsCommit(int isolation) throws Exception {
        Race race = race(freshResource(), isolation, Guard.OFF);
        assertThat(race.staleAfterTakeoverCommitted()).as("control: %s", race).isPositive();
    }

    /**
     * The order the guard promises, step by step: a stale transaction that entered before the
     * takeover holds the new token's first transaction back until it ends, and commits; one that
     * enters after the takeover committed is refused, with what it wrote before entering.
     */
    @Test
    void anOldTransactionThatEnteredFirstCommitsAndTheNewTokenWaitsForIt() throws Exception {
        String resource = freshResource();
        try (Connection first = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            write(first, resource, 1, "before", true);
            first.commit();
        }
        ExecutorService other = Executors.newSingleThreadExecutor();
        try (Connection old = begin(Connection.TRANSACTION_READ_COMMITTED);
             Connection fresh = begin(Connection.TRANSACTION_READ_COMMITTED);
             Connection late = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            fences.enter(old, resource, 1); // entered before the takeover, still open
            Future<?> takeover = other.submit(() -> {
                fences.enter(fresh, resource, 2);
                return null;
            });
            assertThatThrownBy(() -> takeover.get(1, TimeUnit.SECONDS)).as("the new token's first transaction waits").isInstanceOf(TimeoutException.class);
            write(old, resource, 1, "entered-before", false);
            old.commit();
            takeover.get(30, TimeUnit.SECONDS);
            write(fresh, resource, 2, "fresh", false);

            // written before entering, entering while the raise is not yet committed: waits, then is refused
            write(late, resource, 1, "late", false);
            Future<?> lateEnter = other.submit(() -> {
                fences.enter(late, resource, 1);
                return null;
            });
            fresh.commit();
            assertThatThrownBy(() -> lateEnter.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(StaleTransactionException.class);
            late.commit(); // a caller that commits anyway: enter rolled the transaction back, nothing is left to commit
        } finally {
            other.shutdown();
        }
        assertThat(count("resource = ? AND phase = 'entered-before'", resource)).as("entered before the takeover: commits").isEqualTo(1);
        assertThat(count("resource = ? AND phase = 'late'", resource)).as("entered after: rolled back whole").isZero();
        assertThat(count("resource = ? AND token = 2", resource)).isEqualTo(1);
        try (Connection after = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            assertThatThrownBy(() -> fences.enter(after, resource, 1)).isInstanceOfSatisfying(StaleTransactionException.class, e -> {
                assertThat(e.resource()).isEqualTo(resource);
                assertThat(e.tokenPresented()).isEqualTo(1);
                assertThat(e.storedFence()).isEqualTo(2);
            });
        }
    }

    /**
     * Eight transactions of one token are inside the guard at the same moment: shared, not
     * serialized. (The token's first transaction, which raised the fence, was exclusive until it
     * committed.)
     */
    @Test
    void transactionsOfOneTokenRunSideBySide() throws Exception {
        String resource = freshResource();
        fences.inTransaction(pool, resource, 7, c -> null);
        int parallel = 8;
        CyclicBarrier allInside = new CyclicBarrier(parallel);
        ExecutorService threads = Executors.newFixedThreadPool(parallel);
        List<Future<?>> done = new ArrayList<>();
        for (int i = 0; i < parallel; i++) {
            done.add(threads.submit(() -> {
                try (Connection c = begin(Connection.TRANSACTION_READ_COMMITTED)) {
                    write(c, resource, 7, "parallel", true);
                    allInside.await(30, TimeUnit.SECONDS); // all eight hold the guard before any commits
                    c.commit();
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get(60, TimeUnit.SECONDS);
        }
        threads.shutdown();
        assertThat(count("resource = ? AND token = 7", resource)).isEqualTo(parallel);
    }

    /** Eight first transactions of a new token at once: no deadlock, all enter. */
    @ParameterizedTest(name = "isolation {0}")
    @ValueSource(ints = {Connection.TRANSACTION_READ_COMMITTED, Connection.TRANSACTION_REPEATABLE_READ})
    void manyFirstTransactionsOfANewTokenEnterWithoutDeadlock(int isolation) throws Exception {
        String resource = freshResource();
        try (Connection c = begin(isolation)) {
            write(c, resource, 1, "before", true);
            c.commit();
        }
        FencedTransactions[] processes = new FencedTransactions[8]; // separate instances: none knows what the others entered
        CyclicBarrier start = new CyclicBarrier(processes.length);
        List<CompletableFuture<String>> outcomes = new ArrayList<>();
        // A thread each: the common pool may run fewer tasks at once than the barrier waits for (one, on two cores).
        ExecutorService threads = Executors.newFixedThreadPool(processes.length);
        for (int i = 0; i < processes.length; i++) {
            FencedTransactions mine = FencedTransactions.create();
            outcomes.add(CompletableFuture.supplyAsync(() -> {
                try (Connection c = begin(isolation)) {
                    start.await(30, TimeUnit.SECONDS);
                    mine.enter(c, resource, 2);
                    c.commit();
                    return "entered";
                } catch (SerializationConflictException e) {
                    return "conflict";
                } catch (Exception e) {
                    return e.toString();
                }
            }, threads));
        }
        List<String> ended = outcomes.stream().map(CompletableFuture::join).toList();
        threads.shutdown();
        // Under REPEATABLE READ on PostgreSQL a raise after the snapshot is a serialization failure, by design; never a deadlock wait, never a refusal.
        assertThat(ended).allMatch(o -> o.equals("entered") || (o.equals("conflict") && isolation == Connection.TRANSACTION_REPEATABLE_READ), "entered");
        assertThat(ended).contains("entered");
    }

    @Test
    void aRaiseThatRollsBackLeavesTheOldTokenCurrent() throws Exception {
        String resource = freshResource();
        try (Connection c = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            fences.enter(c, resource, 1);
            c.commit();
        }
        try (Connection c = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            fences.enter(c, resource, 2);
            c.rollback();
        }
        try (Connection c = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            write(c, resource, 1, "still-current", true);
            c.commit();
        }
        try (Connection c = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            write(c, resource, 2, "fresh", true); // this instance remembers 2 as entered: it must raise again
            c.commit();
        }
        try (Connection c = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            assertThatThrownBy(() -> fences.enter(c, resource, 1)).isInstanceOf(StaleTransactionException.class);
        }
        assertThat(count("resource = ? AND phase = 'still-current'", resource)).isEqualTo(1);
    }

    /**
     * Checked with the commit: a stale transaction's statements never commit, and one whose token's
     * raise was rolled back is told to run again (a retryable conflict), not refused.
     */
    @Test
    void theCommitTimeCheckRefusesAStaleTransactionAndReportsARolledBackRaise() throws Exception {
        String resource = freshResource();
        try (Connection c = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            transaction(c, resource, 1, "first", Guard.AT_COMMIT);
        }
        try (Connection c = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            transaction(c, resource, 1, "second", Guard.AT_COMMIT); // the token has entered: on PostgreSQL, one round trip
        }
        FencedTransactions other = FencedTransactions.create();
        try (Connection c = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            other.enter(c, resource, 2);
            c.commit();
        }
        try (Connection c = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            write(c, resource, 1, "stale", false);
            assertThatThrownBy(() -> fences.commit(c, resource, 1)).isInstanceOf(StaleTransactionException.class);
        }
        FencedTransactions third = FencedTransactions.create();
        try (Connection c = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            third.enter(c, resource, 3); // raised, then rolled back: the instance saw token 3 enter, the guard did not keep it
            c.rollback();
        }
        try (Connection c = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            write(c, resource, 3, "raise-lost", false);
            try {
                third.commit(c, resource, 3);
            } catch (SerializationConflictException retry) {
                // PostgreSQL's one-round-trip check found the guard below the token
            }
        }
        try (Connection c = begin(Connection.TRANSACTION_READ_COMMITTED)) {
            transaction(c, resource, 3, "again", Guard.AT_COMMIT);
        }
        assertThat(count("resource = ? AND phase IN ('first', 'second')", resource)).isEqualTo(2);
        assertThat(count("resource = ? AND phase = 'stale'", resource)).isZero();
        assertThat(count("resource = ? AND phase = 'again'", resource)).isEqualTo(1);
    }

    @Test
    void inTransactionCommitsOrRollsBackWhole() throws Exception {
        String resource = freshResource();
        long id = fences.inTransaction(pool, resource, 5, c -> {
            write(c, resource, 5, "helper", false);
            return 1L;
        });
        assertThat(id).isEqualTo(1L);
        fences.inTransaction(pool, resource, 6, c -> null);
        assertThatThrownBy(() -> fences.inTransaction(pool, resource, 5, c -> {
            write(c, resource, 5, "helper-stale", false);
            return null;
        })).isInstanceOf(StaleTransactionException.class);
        assertThatThrownBy(() -> fences.inTransaction(pool, resource, 6, c -> {
            write(c, resource, 6, "helper-failed", false);
            throw new IllegalStateException("the caller's own failure");
        })).hasMessage("the caller's own failure");
        assertThat(count("resource = ? AND phase = 'helper'", resource)).isEqualTo(1);
        assertThat(count("resource = ? AND phase IN ('helper-stale', 'helper-failed')", resource)).isZero();
    }

    @Test
    void badInputIsRefusedBeforeAnythingIsWritten() throws Exception {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(true);
            assertThatThrownBy(() -> fences.enter(c, freshResource(), 1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("auto-commit");
            c.setAutoCommit(false);
            assertThatThrownBy(() -> fences.enter(c, freshResource(), 0)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> fences.enter(c, "", 1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> fences.enter(c, "x".repeat(201), 1)).isInstanceOf(IllegalArgumentException.class);
            c.rollback();
            c.setAutoCommit(true);
        }
        assertThatThrownBy(() -> FencedTransactions.withGuardTable("guard; DROP TABLE x")).isInstanceOf(IllegalArgumentException.class);
    }
}
