package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FenceViolation;
import dev.fenced.FencedExecutor;
import dev.fenced.FencedObserver;
import dev.fenced.Lease;
import dev.fenced.LeaseStore;
import dev.fenced.LeaseView;
import dev.fenced.StoreUnavailableException;
import dev.fenced.testing.LeaseStoreContract;
import dev.fenced.testing.ManualScheduler;
import dev.fenced.testing.servers.OneConnectionPool;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link JdbcLeaseStore} on one database: the lease store contract, and what a database adds to it
 * (pooled connections killed, an unreachable server, clients in other time zones, the race the
 * token guard closes). A subclass per dialect supplies the URL and the few statements that differ.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcLeaseStoreContract extends LeaseStoreContract {
    protected HikariDataSource pool;
    private JdbcLeaseStore store;

    protected abstract String jdbcUrl();

    /** The server's id of the session behind {@code connection}. */
    protected abstract long sessionId(Connection connection) throws SQLException;

    /** Ends the session {@code id} from {@code admin}, as an operator or a failover would. */
    protected abstract void terminate(Connection admin, long id) throws SQLException;

    /** True while session {@code id} waits for a row lock. */
    protected abstract boolean waitsForALock(Connection admin, long id) throws SQLException;

    /** A statement that moves the lease's expiry a second into the past by the database's clock; one parameter, the resource. */
    protected abstract String expireSql();

    /** An expression drawing the next value of {@code fence_token_seq}. */
    protected abstract String nextTokenExpression();

    /** A statement that puts the session in time zone {@code zone} ({@code +14:00}). */
    protected abstract String sessionZoneSql(String zone);

    /**
     * The control of the time zone test: creates {@code table} with a session-local expiry column,
     * then the statement that writes a 10 s lease by the session's local clock, and the one reading its
     * microseconds left by the reading session's local clock (both take the resource).
     */
    protected abstract List<String> localTimeControl(String table);

    /** A JDBC URL of this dialect for a server that is not there (port 1), with the password given. */
    protected abstract String unreachableUrl(String password);

    @BeforeAll
    void open() {
        pool = pool(jdbcUrl(), 8, null);
        FencedSchema.migrate(pool);
        store = JdbcLeaseStore.builder(pool).build();
    }

    @AfterAll
    void close() {
        if (pool != null) {
            pool.close();
        }
    }

    protected static HikariDataSource pool(String url, int size, String initSql) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        if (initSql != null) {
            config.setConnectionInitSql(initSql);
        }
        return new HikariDataSource(config);
    }

    @Override
    protected LeaseStore store() {
        return store;
    }

    @Override
    protected void expireLeaseBehindItsBack(String resource) {
        try (Connection c = pool.getConnection(); PreparedStatement s = c.prepareStatement(expireSql())) {
            s.setString(1, resource);
            assertThat(s.executeUpdate()).as("lease row of " + resource).isEqualTo(1);
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    protected Duration timeLeft(String resource) {
        return store.view(resource).timeLeft();
    }

    /** A release ends the lease and keeps the token: the next holder's is above it, and the view still shows it. */
    @Test
    void aReleaseKeepsTheRowAndItsToken() {
        String resource = freshResource();
        Lease lease = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(lease.release()).isTrue();
        LeaseView released = store.view(resource);
        assertThat(released.held()).isFalse();
        assertThat(released.highestTokenIssued()).as("token kept after the release").isEqualTo(lease.token());
        assertThat(lease.renew(Duration.ofSeconds(10))).as("a released lease is not renewed").isFalse();
        assertThat(lease.isHeld()).isFalse();
    }

    /**
     * The race the guard closes, made to happen: an acquirer draws its token, then waits for the row
     * lock an administrator holds; meanwhile a faster acquirer (the administrator) stores a higher
     * token and releases. With the guard the stalled acquirer is refused and the token stays; the
     * control, the same SQL without {@code token < new}, grants the lower token: a token going back.
     */
    @Test
    void aTokenDrawnBeforeAStallNeverLandsBelowOneStoredMeanwhile() throws Exception {
        Race guarded = raceAStalledAcquirer(JdbcLeaseStore::builder);
        assertThat(guarded.stalled()).as("the stalled acquirer, guarded").isEmpty();
        assertThat(store.view(guarded.resource()).highestTokenIssued()).isEqualTo(guarded.storedMeanwhile());
        Lease next = store.tryAcquire(guarded.resource(), Duration.ofSeconds(10)).orElseThrow();
        assertThat(next.token()).isGreaterThan(guarded.storedMeanwhile());
        next.release();

        Race control = raceAStalledAcquirer(ds -> JdbcLeaseStore.builder(ds).withoutTokenGuard());
        assertThat(control.stalled()).as("control: without the guard the stalled acquirer is granted").isPresent();
        assertThat(control.stalled().get().token()).as("control: its token went back below the one stored meanwhile")
                .isLessThan(control.storedMeanwhile());
    }

    private record Race(String resource, Optional<Lease> stalled, long storedMeanwhile) {
    }

    private Race raceAStalledAcquirer(Function<DataSource, JdbcLeaseStore.Builder> builder) throws Exception {
        String resource = freshResource();
        store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow().release();
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try (Connection admin = pool.getConnection(); Connection locker = pool.getConnection(); Connection own = pool.getConnection()) {
            long ownSession = sessionId(own);
            // The stalled acquirer runs on a connection of its own, so the test can see it wait.
            JdbcLeaseStore stalling = builder.apply(OneConnectionPool.of(own)).statementTimeout(Duration.ofSeconds(30)).build();
            locker.setAutoCommit(false);
            try (PreparedStatement lock = locker.prepareStatement("SELECT token FROM fence_lease WHERE resource = ? FOR UPDATE")) {
                lock.setString(1, resource);
                lock.executeQuery().close();
            }
            Future<Optional<Lease>> stalled = thread.submit(() -> stalling.tryAcquire(resource, Duration.ofSeconds(10)));
            await().atMost(Duration.ofSeconds(20)).until(() -> waitsForALock(admin, ownSession));
            long storedMeanwhile;
            try (PreparedStatement faster = locker.prepareStatement(
                    "UPDATE fence_lease SET token = " + nextTokenExpression() + ", owner_id = NULL WHERE resource = ?")) {
                faster.setString(1, resource);
                assertThat(faster.executeUpdate()).isEqualTo(1);
            }
            try (PreparedStatement read = locker.prepareStatement("SELECT token FROM fence_lease WHERE resource = ?")) {
                read.setString(1, resource);
                try (ResultSet rs = read.executeQuery()) {
                    rs.next();
                    storedMeanwhile = rs.getLong(1);
                }
            }
            locker.commit();
            locker.setAutoCommit(true);
            return new Race(resource, stalled.get(30, TimeUnit.SECONDS), storedMeanwhile);
        } finally {
            thread.shutdownNow();
        }
    }

    /**
     * A session that holds the lease row's lock (a stalled transaction of someone else's) holds up an
     * acquisition no longer than the statement timeout, which fails as a database wait naming what
     * waited, and writes nothing. The control: the same acquisition after the lock is gone is granted.
     */
    @Test
    void anAcquisitionBehindAHeldRowLockGivesUpAtTheStatementTimeout() throws SQLException {
        String resource = freshResource();
        store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow().release();
        long stored = store.view(resource).highestTokenIssued();
        JdbcLeaseStore bounded = JdbcLeaseStore.builder(pool).statementTimeout(Duration.ofSeconds(1)).build();
        try (Connection locker = pool.getConnection()) {
            locker.setAutoCommit(false);
            try (PreparedStatement lock = locker.prepareStatement("SELECT token FROM fence_lease WHERE resource = ? FOR UPDATE")) {
                lock.setString(1, resource);
                lock.executeQuery().close();
            }
            long started = System.nanoTime();
            assertThatThrownBy(() -> bounded.tryAcquire(resource, Duration.ofSeconds(10)))
                    .isInstanceOf(DatabaseWaitException.class)
                    .hasMessageContaining("acquiring the lease on " + resource + " in fence_lease")
                    .hasMessageContaining("gave up waiting for");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
            locker.rollback();
            locker.setAutoCommit(true);
        }
        assertThat(store.view(resource).highestTokenIssued()).as("nothing written").isEqualTo(stored);
        Lease control = bounded.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(control.token()).isGreaterThan(stored);
        control.release();
    }

    /** Tokens keep rising after every pooled connection was ended under the store; a dead connection fails as unavailable, never half-written. */
    @Test
    void tokensKeepRisingAfterEveryPooledConnectionWasTerminated() throws Exception {
        String resource = freshResource();
        try (HikariDataSource killed = pool(jdbcUrl(), 4, null); Connection admin = pool.getConnection()) {
            JdbcLeaseStore onKilled = JdbcLeaseStore.builder(killed).build();
            long before = 0;
            for (int i = 0; i < 10; i++) {
                Lease lease = onKilled.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
                assertThat(lease.token()).isGreaterThan(before);
                before = lease.token();
                lease.release();
            }
            List<Connection> all = new ArrayList<>();
            List<Long> sessions = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                Connection c = killed.getConnection();
                all.add(c);
                sessions.add(sessionId(c));
            }
            for (Connection c : all) {
                c.close();
            }
            for (long session : sessions) {
                terminate(admin, session);
            }
            AtomicInteger unavailable = new AtomicInteger();
            List<Long> after = new ArrayList<>();
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                try {
                    Lease lease = onKilled.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
                    after.add(lease.token());
                    assertThat(lease.release()).isTrue();
                } catch (StoreUnavailableException e) {
                    unavailable.incrementAndGet();
                }
                return after.size() >= 10;
            });
            assertThat(after.get(0)).as("first token after the kill (%d attempts failed as unavailable)", unavailable.get())
                    .isGreaterThan(before);
            for (int i = 1; i < after.size(); i++) {
                assertThat(after.get(i)).isGreaterThan(after.get(i - 1));
            }
            assertThat(unavailable.get()).as("the dead connections fail at most once each").isLessThanOrEqualTo(4);
            System.out.printf("%s: %d acquisitions failed as unavailable after 4 pooled connections were ended%n", getClass().getSimpleName(), unavailable.get());
        }
    }

    /** An unreachable database: StoreUnavailableException in bounded time, naming the store, without the password. */
    @Test
    void anUnreachableDatabaseIsUnavailableQuicklyAndTheMessageHasNoPassword() {
        String password = "s3cret-Pw_77";
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(unreachableUrl(password));
        config.setConnectionTimeout(1_000);
        config.setInitializationFailTimeout(-1);
        try (HikariDataSource unreachable = new HikariDataSource(config)) {
            JdbcLeaseStore onNothing = JdbcLeaseStore.builder(unreachable).build();
            long started = System.nanoTime();
            assertThatThrownBy(() -> onNothing.tryAcquire(freshResource(), Duration.ofSeconds(10)))
                    .isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("fence_lease")
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain(password));
            assertThat(Duration.ofNanos(System.nanoTime() - started)).as("bounded by the pool's connection timeout")
                    .isLessThan(Duration.ofSeconds(10));
        }
        // Without a pool: the driver's own refusal, the URL (password and all) behind the DataSource.
        JdbcLeaseStore direct = JdbcLeaseStore.builder(new dev.fenced.testing.servers.UrlDataSource(unreachableUrl(password))).build();
        assertThatThrownBy(() -> direct.view(freshResource()))
                .isInstanceOf(StoreUnavailableException.class)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(password));
    }

    /**
     * No client time enters the SQL: every parameter any operation binds is a string or a number
     * (a resource, an owner id, a token, a TTL), never a date, time or timestamp, so a client whose
     * clock is hours off ends and takes over leases exactly when every other client does.
     */
    @Test
    void theStoreBindsNoClientTime() {
        Set<String> bound = ConcurrentHashMap.newKeySet();
        JdbcLeaseStore recorded = JdbcLeaseStore.builder(recordingBinds(pool, bound)).build();
        String resource = freshResource();
        Lease lease = recorded.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(lease.renew(Duration.ofSeconds(10))).isTrue();
        assertThat(lease.isHeld()).isTrue();
        recorded.view(resource);
        assertThat(lease.release()).isTrue();
        assertThat(recorded.tryAcquire(resource, Duration.ofMillis(1))).isPresent();
        assertThat(bound).as("the setters called").isNotEmpty().allMatch(name -> name.equals("setString") || name.equals("setLong"));
    }

    /**
     * Two clients whose sessions are 25 hours apart (+13:00 and -12:00) agree on a lease to the
     * millisecond: the one in -12:00 sees the other's 10 s lease live with at most 10 s left, and takes
     * it over as soon as the database's clock ends it. The control: the same lease written by the
     * session's local clock, read from the other zone, is 25 hours off.
     */
    @Test
    void clientsInTimeZonesADayApartAgreeOnWhenALeaseEnds() throws SQLException {
        try (HikariDataSource east = pool(jdbcUrl(), 2, sessionZoneSql("+13:00"));
             HikariDataSource west = pool(jdbcUrl(), 2, sessionZoneSql("-12:00"))) {
            JdbcLeaseStore eastStore = JdbcLeaseStore.builder(east).build();
            JdbcLeaseStore westStore = JdbcLeaseStore.builder(west).build();
            String resource = freshResource();
            Lease eastLease = eastStore.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            LeaseView seenFromWest = westStore.view(resource);
            assertThat(seenFromWest.holder()).isEqualTo(eastLease.ownerId());
            assertThat(seenFromWest.timeLeft()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(10));
            assertThat(westStore.tryAcquire(resource, Duration.ofSeconds(10))).as("live, seen from 25 hours west").isEmpty();
            runOutTtl(eastLease);
            Lease westLease = westStore.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            assertThat(westLease.token()).isGreaterThan(eastLease.token());
            assertThat(eastStore.view(resource).timeLeft()).as("seen from the east").isPositive().isLessThanOrEqualTo(Duration.ofSeconds(10));
            westLease.release();

            String controlTable = "fence_lease_local_control";
            List<String> control = localTimeControl(controlTable);
            try (Connection e = east.getConnection(); Connection w = west.getConnection()) {
                try (var s = e.createStatement()) {
                    s.execute(control.get(0));
                }
                try (PreparedStatement write = e.prepareStatement(control.get(1))) {
                    write.setString(1, resource);
                    write.executeUpdate();
                }
                try (PreparedStatement read = w.prepareStatement(control.get(2))) {
                    read.setString(1, resource);
                    try (ResultSet rs = read.executeQuery()) {
                        rs.next();
                        assertThat(Duration.ofNanos(Math.abs(rs.getLong(1)) * 1000)).as("control: a local-time expiry read 25 hours away")
                                .isGreaterThan(Duration.ofHours(24));
                    }
                }
            }
        }
    }

    /** The executor takes, renews (on a manual scheduler) and releases a lease of this store, and reports one lost behind its back. */
    @Test
    void theExecutorRunsRenewsAndReleasesUnderThisStore() {
        String resource = freshResource();
        ManualScheduler scheduler = new ManualScheduler();
        List<FencedObserver.RenewalOutcome> renewals = new CopyOnWriteArrayList<>();
        JdbcLeaseStore observed = JdbcLeaseStore.builder(pool).ownerLabel("worker-7").observer(new FencedObserver() {
            @Override
            public void renewed(String r, long token, FencedObserver.RenewalOutcome outcome) {
                renewals.add(outcome);
            }
        }).build();
        try {
            FencedExecutor executor = FencedExecutor.builder(observed).ttl(Duration.ofSeconds(30)).scheduler(scheduler)
                    .clock(scheduler.clock()).build();
            FencedExecutor.Outcome<Long> kept = executor.execute(resource, lease -> {
                assertThat(lease.ownerId()).startsWith("worker-7/");
                assertThat(observed.view(resource).holder()).isEqualTo(lease.ownerId());
                scheduler.advance(Duration.ofSeconds(10));
                assertThat(observed.view(resource).timeLeft()).as("renewed").isGreaterThan(Duration.ofSeconds(20));
                return lease.token();
            });
            assertThat(kept.status()).isEqualTo(FencedExecutor.Status.EXECUTED);
            assertThat(kept.leaseLostWhileRunning()).isFalse();
            assertThat(renewals).containsExactly(FencedObserver.RenewalOutcome.RENEWED);
            assertThat(observed.view(resource).held()).as("released after the run").isFalse();

            FencedExecutor.Outcome<Long> lost = executor.execute(resource, lease -> {
                expireLeaseBehindItsBack(resource);
                scheduler.advance(Duration.ofSeconds(10));
                return lease.token();
            });
            assertThat(lost.token()).isGreaterThan(kept.token());
            assertThat(lost.leaseLostWhileRunning()).as("the watchdog found it gone").isTrue();
            assertThat(renewals).endsWith(FencedObserver.RenewalOutcome.LOST);
        } finally {
            scheduler.shutdownNow();
        }
    }

    /**
     * A write refused for a fence above the sequence (stored by Redis-issued tokens before a switch)
     * raises the sequence through the executor, so the next run's token is above that fence instead of
     * being refused on every run.
     */
    @Test
    void aRefusedWriteRaisesTheSequenceAboveTheFenceItRevealed() {
        String resource = freshResource();
        FencedExecutor executor = FencedExecutor.builder(store).ttl(Duration.ofSeconds(30)).build();
        long current = store.tryAcquire(resource, Duration.ofSeconds(10)).map(l -> {
            l.release();
            return l.token();
        }).orElseThrow();
        long fence = current + 10_000;
        FencedExecutor.Outcome<Object> refused = executor.execute(resource, lease -> {
            throw new FenceViolation("refund", "r_1", lease.token(), fence, "claimed");
        });
        assertThat(refused.status()).isEqualTo(FencedExecutor.Status.FENCED_OUT);
        Lease next = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(next.token()).isGreaterThan(fence);
        next.release();
    }

    @Test
    void theBuilderRefusesABadTableNameAndTimeout() {
        assertThatThrownBy(() -> JdbcLeaseStore.builder(pool).table("lease; DROP TABLE x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> JdbcLeaseStore.builder(pool).statementTimeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThat(JdbcLeaseStore.builder(pool).table("public_x.fence_lease").build().table()).isEqualTo("public_x.fence_lease");
    }

    /** A missing table is named, with the migration that makes it. */
    @Test
    void aMissingTableIsNamedWithItsMigration() {
        JdbcLeaseStore missing = JdbcLeaseStore.builder(pool).table("fence_lease_never_made").build();
        assertThatThrownBy(() -> missing.tryAcquire(freshResource(), Duration.ofSeconds(1)))
                .isInstanceOf(FencedDataAccessException.class)
                .hasMessageContaining("fence_lease_never_made").hasMessageContaining("FencedSchema.migrate");
    }

    /** A DataSource whose prepared statements record the name of every parameter setter called. */
    private static DataSource recordingBinds(DataSource real, Set<String> bound) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, args) -> {
            Object result = invoke(real, m, args);
            if (!m.getName().equals("getConnection")) {
                return result;
            }
            Connection connection = (Connection) result;
            return Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (cp, cm, cargs) -> {
                Object made = invoke(connection, cm, cargs);
                if (!cm.getName().equals("prepareStatement")) {
                    return made;
                }
                PreparedStatement statement = (PreparedStatement) made;
                return Proxy.newProxyInstance(PreparedStatement.class.getClassLoader(), new Class<?>[] {PreparedStatement.class},
                        (sp, sm, sargs) -> {
                            if (sm.getName().startsWith("set") && sargs != null && sargs.length >= 2 && sargs[0] instanceof Integer
                                    && !sm.getName().equals("setQueryTimeout")) {
                                bound.add(sm.getName());
                            }
                            return invoke(statement, sm, sargs);
                        });
            });
        });
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
