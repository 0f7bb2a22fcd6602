package dev.fenced.shedlock;

import dev.fenced.Lease;
import dev.fenced.jdbc.FencedTransactions;
import dev.fenced.jdbc.StaleTransactionException;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.testing.servers.UrlDataSource;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;

/**
 * A ShedLock task as a team writes one: {@code LockingTaskExecutor} (what {@code @SchedulerLock}
 * calls) on the {@link FencedLockProvider}, posting one ledger line with the lock's token, in a
 * transaction entered under it ({@code fenced}) or a plain one (the control). Run as a process by
 * {@link PausedShedLockTaskTest}: with {@code hold}, it prints {@code HOLDING <token>} and waits for a
 * line on stdin before it writes; it ends with {@code OUTCOME <status> <token>} and exits 0
 * executed, 2 busy, 3 fenced out.
 */
final class ShedLockedLedger {
    static final String TABLE = "shedlock_ledger";
    static final Duration LOCK_AT_MOST_FOR = Duration.ofMillis(1500);

    private final LockingTaskExecutor executor;
    private final DataSource database;
    private final FencedTransactions fences = FencedTransactions.create();

    ShedLockedLedger(FencedLockProvider locks, DataSource database) {
        this.executor = new DefaultLockingTaskExecutor(locks);
        this.database = database;
    }

    /** One scheduled run: {@code EXECUTED <token>}, {@code BUSY 0} or {@code FENCED_OUT <token>}. */
    String post(String account, boolean fenced, boolean hold) throws Exception {
        long[] token = new long[1];
        try {
            LockingTaskExecutor.TaskResult<Long> result = executor.executeWithLock(() -> {
                Lease lease = FencedShedLock.current().orElseThrow();
                token[0] = lease.token();
                if (hold) {
                    System.out.println("HOLDING " + lease.token());
                    System.out.flush();
                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
                }
                return fenced
                        ? fences.inTransaction(database, lease.resource(), lease.token(), connection -> insert(connection, account, lease.token()))
                        : insertAlone(account, lease.token());
            }, new LockConfiguration(Instant.now(), "ledger:" + account, LOCK_AT_MOST_FOR, Duration.ZERO));
            return result.wasExecuted() ? "EXECUTED " + result.getResult() : "BUSY 0";
        } catch (StaleTransactionException refused) {
            return "FENCED_OUT " + token[0];
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable other) {
            throw new IllegalStateException(other);
        }
    }

    private long insertAlone(String account, long token) throws SQLException {
        try (Connection connection = database.getConnection()) {
            return insert(connection, account, token);
        }
    }

    private static long insert(Connection connection, String account, long token) throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO " + TABLE + " (account, token, amount) VALUES (?, ?, 70.25)")) {
            insert.setString(1, account);
            insert.setLong(2, token);
            insert.executeUpdate();
        }
        return token;
    }

    /** {@code <redis uri> <jdbc url> <account> <fenced>}: one held run, as process A. */
    public static void main(String[] args) throws Throwable {
        String outcome;
        try (RedisLeaseStore store = RedisLeaseStore.builder(args[0]).build()) {
            outcome = new ShedLockedLedger(FencedLockProvider.of(store), new UrlDataSource(args[1]))
                    .post(args[2], Boolean.parseBoolean(args[3]), true);
        }
        System.out.println("OUTCOME " + outcome);
        System.exit(outcome.startsWith("EXECUTED") ? 0 : outcome.startsWith("BUSY") ? 2 : 3);
    }
}
