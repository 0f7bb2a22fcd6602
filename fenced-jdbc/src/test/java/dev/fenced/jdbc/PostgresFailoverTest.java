package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fenced.FenceViolation;
import dev.fenced.embedded.PostgresPair;
import dev.fenced.testing.servers.UrlDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fence across a PostgreSQL failover, on a real primary and streaming replica
 * ({@link PostgresPair}). A holds r_815 with token 33 (replicated); the primary's WAL sender is
 * frozen, so the replica lags; B's claim with token 34 is sent to the primary; the primary crashes and the
 * replica is promoted; A, following the failover through a multi-host URL
 * ({@code targetServerType=primary}), confirms with 33.
 *
 * <p>Asynchronous replication: B's claim was acknowledged by the old primary but never reached the
 * replica, so the promoted one holds fence 33 and takes A's stale confirm: a violation, the one
 * replication setting can cause (the negative control). Synchronous ({@code synchronous_commit=on},
 * the replica in {@code synchronous_standby_names}): B's commit waits for the replica and is never
 * acknowledged; the crash ends it with an error, so B never acts on it, and A's confirm with the
 * highest acknowledged token is no violation. Unless B's wait is cancelled (a JDBC query timeout
 * sends a cancel, as does {@code pg_cancel_backend}; {@code statement_timeout} does not bound the
 * wait): PostgreSQL then reports the commit as made ("committed locally, but might not have been
 * replicated"), so B's claim is acknowledged, lost in the failover, and A's stale confirm taken.
 * Synchronous replication closes the gap only for commits whose wait is not cut short. A violation is a write accepted with a token below one already acknowledged on the row.
 */
class PostgresFailoverTest {
    private static final FencedTable JOBS = FencedTable.builder("failover_job").states("pending", "sending", "sent").build();
    private static final String ROW = "r_815";

    /** How B's commit meets the replica. */
    enum Replication {
        ASYNCHRONOUS(false),
        SYNCHRONOUS(true),
        /** Synchronous, and B's wait for the standby cancelled, as a client's query timeout cancels it. */
        SYNCHRONOUS_WAIT_CANCELLED(true);

        final boolean synchronous;

        Replication(boolean synchronous) {
            this.synchronous = synchronous;
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Replication.class)
    void aStaleHoldersWriteAfterAFailoverIsAViolationUnlessTheNewerCommitWaitedForTheReplica(Replication replication) throws Exception {
        boolean synchronous = replication.synchronous;
        requirePostgresBinaries();
        FencedRows rows = FencedRows.of(JOBS);
        try (PostgresPair pair = PostgresPair.start(synchronous)) {
            DataSource primary = new UrlDataSource(pair.primaryUrl());
            execute(primary, "CREATE TABLE failover_job (id VARCHAR(64) PRIMARY KEY, state VARCHAR(16) NOT NULL, fence BIGINT NOT NULL DEFAULT 0)");
            execute(primary, "INSERT INTO failover_job (id, state) VALUES ('" + ROW + "', 'pending')");
            rows.claim(primary, ROW, 33);
            pair.awaitReplicaCaughtUp();

            pair.freezeReplication();
            CompletableFuture<Void> claimB = CompletableFuture.runAsync(() -> rows.claim(primary, ROW, 34));
            boolean acknowledgedB;
            if (synchronous) {
                // B's commit is made on the primary and waits for the frozen standby to confirm it.
                await("B's commit waiting for the synchronous standby").atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(20)).until(() -> pair.commitsWaitingForStandby() == 1);
            }
            if (replication == Replication.SYNCHRONOUS_WAIT_CANCELLED) {
                pair.cancelCommitsWaitingForStandby();
            }
            if (replication == Replication.SYNCHRONOUS) {
                pair.crashPrimary();
                assertThatThrownBy(() -> claimB.get(30, TimeUnit.SECONDS)).as("the crash ends B's wait with an error")
                        .isInstanceOf(ExecutionException.class);
                acknowledgedB = false;
            } else {
                claimB.get(30, TimeUnit.SECONDS);
                acknowledgedB = true;
                pair.crashPrimary();
            }
            pair.promoteReplica();

            DataSource following = new UrlDataSource(pair.followingUrl());
            assertThat(fence(following)).as("the promoted replica's fence").isEqualTo(33);
            boolean acceptedA;
            try {
                rows.confirm(following, ROW, 33, Map.of());
                acceptedA = true;
            } catch (FenceViolation refused) {
                acceptedA = false;
            }
            long violations = acknowledgedB && acceptedA ? 1 : 0;
            System.out.printf("failover (%s): B's claim with 34 %s; A's confirm with 33 on the promoted replica %s;"
                    + " violations %d%n", replication, acknowledgedB ? "acknowledged" : "never acknowledged",
                    acceptedA ? "accepted" : "refused", violations);
            if (replication == Replication.SYNCHRONOUS) {
                assertThat(violations).as("no acknowledged fence lost, no stale write accepted over one").isZero();
            } else {
                assertThat(violations).as("the acknowledged fence 34 was lost, and A's stale write taken").isOne();
            }
        }
    }

    /**
     * The store's own defence against the cancelled wait: its grant statement carries a JDBC query
     * timeout, which cancels a commit stuck waiting for the standby, and PostgreSQL then reports the
     * grant as made with a warning. The store refuses to use it. The control runs a write that returns
     * a row, with the same timeout, by hand: the driver hands back the row, the warning beside it.
     */
    @Test
    void aLeaseGrantWhoseStandbyWaitWasCancelledIsNotUsed() throws Exception {
        requirePostgresBinaries();
        try (PostgresPair pair = PostgresPair.start(true)) {
            DataSource primary = new UrlDataSource(pair.primaryUrl());
            FencedSchema.migrate(primary);
            JdbcLeaseStore store = JdbcLeaseStore.builder(primary).statementTimeout(Duration.ofSeconds(1)).build();
            store.tryAcquire("failover:warm", Duration.ofSeconds(30)).orElseThrow().release();
            execute(primary, "CREATE TABLE failover_control (id INTEGER)");
            pair.awaitReplicaCaughtUp();

            pair.freezeReplication();
            assertThatThrownBy(() -> store.tryAcquire("failover:r_815", Duration.ofSeconds(30)))
                    .isInstanceOf(GrantInDoubtException.class)
                    .hasMessageContaining("the lease on failover:r_815 was granted with a warning")
                    .hasMessageContaining("canceling wait for synchronous replication");

            try (Connection connection = primary.getConnection();
                 java.sql.PreparedStatement draw = connection.prepareStatement("INSERT INTO failover_control VALUES (1) RETURNING id")) {
                draw.setQueryTimeout(1);
                try (ResultSet row = draw.executeQuery()) {
                    assertThat(row.next()).as("control: the driver reports the cancelled wait as a result").isTrue();
                }
                java.sql.SQLWarning warning = draw.getWarnings();
                assertThat(warning != null).as("control: the warning beside it").isTrue();
            }
        }
    }

    /**
     * Epochs and database-issued tokens come from a sequence, and a sequence hands out values the
     * standby may not have: nextval writes a WAL record for 32 values at once, and only the call
     * that writes it waits for a synchronous standby; the next calls return at once. A failover
     * before that record reached the standby draws those values again: a token repeated (the
     * 30-minute chaos run's 10 violations, RELIABILITY.md "A long run"). Control: plain
     * {@code nextval}, which hands out values while the standby is frozen, and the promoted replica
     * hands them out again. The source's draw waits for the standby each time, so it hands out
     * none until the crash ends its wait with an error.
     */
    @Test
    void sequenceValuesAreNeverHandedOutAgainAfterAFailover() throws Exception {
        requirePostgresBinaries();
        ExecutorService draws = Executors.newCachedThreadPool(); // every draw on a thread of its own: five wait at once
        try (PostgresPair pair = PostgresPair.start(true)) {
            DataSource primary = new UrlDataSource(pair.primaryUrl());
            FencedSchema.migrate(primary);
            JdbcSequenceEpochSource epochs = JdbcSequenceTokenSource.epochs(primary);
            epochs.nextEpoch("failover:warm");
            pair.awaitReplicaCaughtUp();

            pair.freezeReplication();
            // Values the standby's copy of the sequence already covers come back at once; the draw that needs a new record
            // waits for the standby. Then the next four come back at once, from the range only the primary has logged.
            List<Long> handedOutPlain = new ArrayList<>();
            CompletableFuture<Long> logging = null;
            for (int i = 0; i < 40 && logging == null; i++) {
                CompletableFuture<Long> draw = CompletableFuture.supplyAsync(() -> plainNextval(primary), draws);
                try {
                    handedOutPlain.add(draw.get(2, TimeUnit.SECONDS));
                } catch (TimeoutException slowOrWaiting) {
                    // A slow connect on a busy machine is not a wait for the standby: only the server can tell.
                    await("the nextval that writes the record waits for the standby").atMost(Duration.ofSeconds(10))
                            .pollInterval(Duration.ofMillis(20)).until(() -> draw.isDone() || pair.commitsWaitingForStandby() == 1);
                    if (draw.isDone()) {
                        handedOutPlain.add(draw.get());
                    } else {
                        logging = draw;
                    }
                }
            }
            assertThat(logging).as("a nextval that waits for the standby within 40 draws").isNotNull();
            for (int i = 0; i < 4; i++) {
                handedOutPlain.add(CompletableFuture.supplyAsync(() -> plainNextval(primary), draws).get(10, TimeUnit.SECONDS));
            }
            List<CompletableFuture<Long>> fromSource = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                fromSource.add(CompletableFuture.supplyAsync(() -> epochs.nextEpoch("failover:r_815"), draws));
            }
            await("every draw of the source waits for the standby").atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(20)).until(() -> pair.commitsWaitingForStandby() == 5);
            pair.crashPrimary();
            pair.promoteReplica();
            long handedOutBySource = 0;
            for (CompletableFuture<Long> draw : fromSource) {
                try {
                    draw.get(40, TimeUnit.SECONDS);
                    handedOutBySource++;
                } catch (ExecutionException endedByTheCrash) {
                    // never handed out
                }
            }
            CompletableFuture<Long> loggingDraw = logging;
            assertThatThrownBy(() -> loggingDraw.get(40, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);

            DataSource following = new UrlDataSource(pair.followingUrl());
            List<Long> after = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                after.add(plainNextval(following));
            }
            System.out.printf("sequence across a failover: plain nextval handed out %s while the standby was frozen (the last four"
                    + " after a draw that waited), the promoted replica's next values %d..%d; the source's draws handed out %d%n",
                    handedOutPlain, after.get(0), after.get(after.size() - 1), handedOutBySource);
            assertThat(after).as("control: values plain nextval handed out are handed out again").containsAnyElementsOf(handedOutPlain);
            assertThat(handedOutBySource).as("values the source handed out before the standby had them").isZero();
        } finally {
            draws.shutdownNow();
        }
    }

    /**
     * A draw whose wait for the standby ends by its own query timeout comes back from PostgreSQL as
     * made, with a warning ("might not have been replicated"): the source refuses the value, as the
     * lease store refuses such a grant (whose test above holds the control: the driver hands back
     * the row, the warning beside it).
     */
    @Test
    void aSequenceDrawWhoseStandbyWaitWasCancelledIsNotUsed() throws Exception {
        requirePostgresBinaries();
        try (PostgresPair pair = PostgresPair.start(true)) {
            DataSource primary = new UrlDataSource(pair.primaryUrl());
            FencedSchema.migrate(primary);
            JdbcSequenceEpochSource epochs = JdbcSequenceTokenSource.epochs(primary, 1);
            epochs.nextEpoch("failover:warm");
            pair.awaitReplicaCaughtUp();

            pair.freezeReplication();
            assertThatThrownBy(() -> epochs.nextEpoch("failover:r_815")).isInstanceOf(GrantInDoubtException.class)
                    .hasMessageContaining("a token for failover:r_815 from fence_epoch_seq came with a warning")
                    .hasMessageContaining("canceling wait for synchronous replication");
        }
    }

    /** Skipped where the server binaries are not installed, never in CI, whose PostgreSQL is Debian's. */
    private static void requirePostgresBinaries() {
        assumeTrue(PostgresPair.binaries().isPresent() || System.getenv("CI") != null,
                "no PostgreSQL server binaries with pg_basebackup under /usr/lib/postgresql");
    }

    private static long plainNextval(DataSource dataSource) {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement();
             ResultSet row = statement.executeQuery("SELECT nextval('" + JdbcSequenceTokenSource.EPOCH_SEQUENCE + "')")) {
            row.next();
            return row.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException("nextval: " + e.getMessage(), e);
        }
    }

    private static long fence(DataSource dataSource) throws SQLException {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement();
             ResultSet row = statement.executeQuery("SELECT fence FROM failover_job WHERE id = '" + ROW + "'")) {
            row.next();
            return row.getLong(1);
        }
    }

    private static void execute(DataSource dataSource, String sql) throws SQLException {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
