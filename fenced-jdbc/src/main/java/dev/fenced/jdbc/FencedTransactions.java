package dev.fenced.jdbc;

import dev.fenced.FencedException;
import dev.fenced.FencedObserver;
import dev.fenced.LeaseArguments;
import dev.fenced.LogKeys;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Fences a whole transaction, whatever it writes: after {@link #enter(Connection, String, long)}
 * the caller's open transaction commits only if no newer token has entered the resource, and the
 * first transaction of a newer token waits until every transaction of the older tokens that
 * entered before it has ended. Inserts, updates and deletes in any table, the application's own
 * included, are covered, with no fence column on them.
 *
 * <p>How: one guard row per resource in {@value #DEFAULT_GUARD_TABLE} ({@code resource},
 * {@code fence}). A transaction of the current token takes a shared lock on it ({@code FOR SHARE}
 * on PostgreSQL, {@code LOCK IN SHARE MODE} on MariaDB) and checks {@code fence = token}; so
 * transactions of one token run side by side. The first transaction of a newer token raises the
 * fence ({@code UPDATE ... SET fence = ? WHERE resource = ? AND fence < ?}), which waits for those
 * shared locks and keeps the row's exclusive lock until it commits; every later transaction of an
 * older token reads the raised fence and is refused with a {@link StaleTransactionException},
 * after this class has rolled it back whole. If the raising transaction rolls back, so does the
 * raise.
 *
 * <p>{@link #commit(Connection, String, long)} gives the same promise checked at the end instead:
 * for a transaction that did not enter, it checks and commits, on PostgreSQL in one round trip.
 *
 * <p>Under REPEATABLE READ (PostgreSQL) a guard row raised after the transaction's snapshot ends
 * in a serialization failure rather than a refusal; deadlocks and serialization failures come out
 * as {@link SerializationConflictException}, never as a violation, and may be retried
 * with the same token.
 *
 * <p>What it does not promise: reads are not fenced (a stale holder can read, and act on what it
 * read outside the database); side effects outside this database need their own fence or
 * idempotency key; a transaction that writes before {@code enter} is still covered, as long as it
 * calls {@code enter} before it commits; a connection in auto-commit mode is refused. An older
 * token's transactions that keep arriving can delay a newer token's first transaction on
 * PostgreSQL (shared locks are granted while the raise waits); they end once the old holder
 * stops. Thread-safe.
 */
public final class FencedTransactions {
    public static final String DEFAULT_GUARD_TABLE = "fence_guard";
    private static final int ATTEMPTS = 5;
    private static final int REMEMBERED_RESOURCES = 10_000;
    private static final String DIVISION_BY_ZERO = "22012";

    private static final Logger LOG = LoggerFactory.getLogger(FencedTransactions.class);

    private final String guardTable;
    private final FencedObserver observer;
    private final String lockRead;
    private final String raise;
    private final DetectedDialect detected = new DetectedDialect();
    /**
     * The highest token this instance saw enter each resource. A token not seen yet tries the raise
     * first: taking the shared lock and then the exclusive one would deadlock two first
     * transactions of one new token against each other.
     */
    private final Map<String, Long> entered = new ConcurrentHashMap<>();

    private FencedTransactions(String guardTable, FencedObserver observer) {
        this.guardTable = SqlIdentifiers.table("guard table", guardTable);
        this.observer = FencedObserver.all(java.util.Objects.requireNonNull(observer, "observer"));
        this.lockRead = "SELECT fence FROM " + this.guardTable + " WHERE resource = ?";
        this.raise = "UPDATE " + this.guardTable + " SET fence = ? WHERE resource = ? AND fence < ?";
    }

    /** Guards in {@value #DEFAULT_GUARD_TABLE}, the table {@link FencedSchema} creates. */
    public static FencedTransactions create() {
        return new FencedTransactions(DEFAULT_GUARD_TABLE, FencedObserver.NONE);
    }

    /** Guards in a table of your own with columns {@code resource} (primary key, text) and {@code fence} (BIGINT NOT NULL). */
    public static FencedTransactions withGuardTable(String guardTable) {
        return new FencedTransactions(guardTable, FencedObserver.NONE);
    }

    /**
     * Fenced transactions on the same guard table that tell {@code observer} of every refusal. A
     * new instance: it shares nothing with this one but the table, as if in another process.
     */
    public FencedTransactions observedBy(FencedObserver observer) {
        return new FencedTransactions(guardTable, observer);
    }

    public String guardTable() {
        return guardTable;
    }

    /**
     * Enters the connection's open transaction under {@code token} for {@code resource}: from here
     * to its end, the transaction holds the guard row, shared with the same token's others or
     * exclusive if it raised the fence.
     *
     * @throws StaleTransactionException when a newer token has entered; the transaction has been rolled back
     * @throws IllegalStateException     when the connection is in auto-commit mode (no transaction to fence)
     * @throws SerializationConflictException on a deadlock or serialization failure; may be retried
     */
    public void enter(Connection connection, String resource, long token) {
        LeaseArguments.requireValidResource(resource);
        if (token < 1) {
            throw new IllegalArgumentException("token must be positive, got " + token);
        }
        JdbcDialect dialect = null;
        try {
            if (connection.getAutoCommit()) {
                throw new IllegalStateException("fencing " + resource + " needs an open transaction: the connection is in auto-commit mode");
            }
            dialect = detected.of(connection);
            Long seen = entered.get(resource);
            if ((seen == null || seen < token) && raise(connection, resource, token)) {
                remember(resource, token);
                return;
            }
            for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                Long fence = lockedFence(connection, dialect, resource);
                if (fence == null) {
                    if (insert(connection, dialect, resource, token)) {
                        remember(resource, token);
                        return;
                    }
                    continue; // another transaction made the row first: read it again
                }
                if (fence == token) {
                    remember(resource, token);
                    return;
                }
                if (fence > token) {
                    connection.rollback();
                    throw refused(resource, token, fence);
                }
                // Below the token, after all (e.g. the raise this instance saw rolled back): raise it now.
                if (raise(connection, resource, token)) {
                    remember(resource, token);
                    return;
                }
            }
            throw new FencedDataAccessException("entering " + resource + " with token " + token + ": the guard row kept changing over "
                    + ATTEMPTS + " attempts", null);
        } catch (SQLException e) {
            FencedException translated = SqlErrors.translate(dialect, "entering " + resource + " with token " + token, e);
            rollbackQuietly(connection, translated);
            throw translated;
        }
    }

    /**
     * Commits the connection's open transaction under {@code token} for {@code resource}, for a
     * transaction that did not call {@link #enter}: the same promise, checked at the end instead of
     * the start. On PostgreSQL, once this instance has seen the token enter the resource, the check
     * travels with the COMMIT in one round trip (a fenced transaction then costs no extra round
     * trip); otherwise, and always on MariaDB, it is {@code enter} and then the commit. A stale
     * transaction did its statements for nothing, but none of them commits.
     *
     * @throws StaleTransactionException when a newer token has entered; the transaction has been rolled back
     * @throws SerializationConflictException on a deadlock or serialization failure, or when the
     *     token's own raise was rolled back after this instance saw it: the transaction was rolled back; run it again
     */
    public void commit(Connection connection, String resource, long token) {
        LeaseArguments.requireValidResource(resource);
        JdbcDialect dialect = null;
        try {
            dialect = detected.of(connection);
            Long seen = entered.get(resource);
            Optional<String> checkAndCommit = dialect.guardCheckAndCommit(guardTable);
            if (checkAndCommit.isEmpty() || seen == null || seen != token) {
                enter(connection, resource, token);
                connection.commit();
                return;
            }
            if (connection.getAutoCommit()) {
                throw new IllegalStateException("fencing " + resource + " needs an open transaction: the connection is in auto-commit mode");
            }
            try (PreparedStatement statement = connection.prepareStatement(checkAndCommit.get())) {
                statement.setString(1, resource);
                statement.setLong(2, token);
                statement.execute();
            } catch (SQLException e) {
                if (!DIVISION_BY_ZERO.equals(e.getSQLState())) {
                    throw e;
                }
                connection.rollback();
                Long fence = currentFence(connection, resource);
                if (fence != null && fence > token) {
                    throw refused(resource, token, fence);
                }
                entered.remove(resource);
                throw new SerializationConflictException("committing under token " + token + " on " + resource
                        + ": the guard holds " + fence + ", the token's raise was rolled back; the transaction was rolled back, run it again",
                        e.getSQLState(), e.getErrorCode(), e);
            }
        } catch (SQLException e) {
            FencedException translated = SqlErrors.translate(dialect, "committing " + resource + " with token " + token, e);
            rollbackQuietly(connection, translated);
            throw translated;
        }
    }

    private StaleTransactionException refused(String resource, long token, long fence) {
        StaleTransactionException refusal = new StaleTransactionException(guardTable, resource, token, fence);
        try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource);
             MDC.MDCCloseable t = MDC.putCloseable(LogKeys.TOKEN, Long.toString(token))) {
            LOG.warn("fenced transaction refused and rolled back: {}", refusal.getMessage());
        }
        observer.fenceViolation("transaction", refusal);
        return refusal;
    }

    private Long currentFence(Connection connection, String resource) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(lockRead)) {
            statement.setString(1, resource);
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next() ? rs.getLong(1) : null;
            } finally {
                connection.rollback();
            }
        }
    }

    /**
     * Runs {@code work} in a transaction of its own on a connection from {@code dataSource}, entered
     * under {@code token}, and commits it; any exception rolls it back whole.
     */
    public <T> T inTransaction(DataSource dataSource, String resource, long token, Work<T> work) {
        return inTransaction(dataSource, -1, resource, token, work);
    }

    /**
     * {@link #inTransaction(DataSource, String, long, Work)} at an isolation level of
     * {@link Connection} ({@code TRANSACTION_READ_COMMITTED}, ...), restored afterwards; -1 keeps
     * the connection's own.
     */
    public <T> T inTransaction(DataSource dataSource, int isolation, String resource, long token, Work<T> work) {
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            int isolationBefore = connection.getTransactionIsolation();
            if (isolation != -1) {
                connection.setTransactionIsolation(isolation);
            }
            connection.setAutoCommit(false);
            try {
                enter(connection, resource, token);
                T result = work.run(connection);
                connection.commit();
                return result;
            } catch (SQLException | RuntimeException | Error e) {
                rollbackQuietly(connection, e);
                if (e instanceof SQLException sql) {
                    throw SqlErrors.translate(detected.of(connection), "a fenced transaction on " + resource, sql);
                }
                throw e;
            } finally {
                connection.setAutoCommit(autoCommit);
                connection.setTransactionIsolation(isolationBefore);
            }
        } catch (SQLException e) {
            throw SqlErrors.translate(null, "a fenced transaction on " + resource, e);
        }
    }

    /** The statements of one fenced transaction. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    private boolean raise(Connection connection, String resource, long token) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(raise)) {
            statement.setLong(1, token);
            statement.setString(2, resource);
            statement.setLong(3, token);
            return statement.executeUpdate() == 1;
        }
    }

    private Long lockedFence(Connection connection, JdbcDialect dialect, String resource) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(lockRead + dialect.lockingReadSuffix())) {
            statement.setString(1, resource);
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next() ? rs.getLong(1) : null;
            }
        }
    }

    /** The resource's first guard row, at this token; false when another transaction made it first. */
    private boolean insert(Connection connection, JdbcDialect dialect, String resource, long token) throws SQLException {
        String sql = dialect.insertUnlessPresent(guardTable, "resource, fence", 2); // the resource's length was checked by enter
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, resource);
            statement.setLong(2, token);
            return statement.executeUpdate() == 1;
        }
    }

    private void remember(String resource, long token) {
        if (entered.size() >= REMEMBERED_RESOURCES) {
            entered.clear(); // forgetting costs one extra statement per resource, never safety
        }
        entered.merge(resource, token, Math::max);
    }

    private static void rollbackQuietly(Connection connection, Throwable cause) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }
}
