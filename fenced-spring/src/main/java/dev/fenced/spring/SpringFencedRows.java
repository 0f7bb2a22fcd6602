package dev.fenced.spring;

import dev.fenced.jdbc.BatchClaim;
import dev.fenced.jdbc.BatchConfirm;
import dev.fenced.jdbc.FencedDataAccessException;
import dev.fenced.jdbc.FencedRows;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@link FencedRows} for code that may run inside a transaction Spring manages
 * ({@code TransactionTemplate}, {@code @Transactional} with a {@code DataSourceTransactionManager}
 * or {@code JdbcTransactionManager}). Inside one, each write runs on the connection Spring bound to
 * the thread for this DataSource: it commits or rolls back with the transaction, and never waits on
 * the row locks that transaction holds, as a second connection from the pool would (until the lock
 * wait times out, or for ever). Outside one, each write runs in auto-commit, so it is committed
 * before the call returns whatever auto-commit the pool hands out, and the connection keeps the
 * mode it came with.
 *
 * <p>An exception from a write (a {@link dev.fenced.FenceViolation} included) marks the transaction
 * rollback-only before it leaves: the holder is stale or the write failed, and nothing else the
 * transaction wrote may commit, even if the caller catches the exception. The batch methods never
 * throw for refused rows; what their refusals mean for the transaction is the caller's to decide
 * ({@link BatchClaim#requireAll()}). Same limits as {@link SpringFencedTransactions}: writes
 * through another DataSource or transaction manager are not covered. Thread-safe.
 */
public final class SpringFencedRows {
    private final DataSource dataSource;
    private final FencedRows rows;

    private SpringFencedRows(DataSource dataSource, FencedRows rows) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.rows = Objects.requireNonNull(rows, "rows");
    }

    /** {@code rows}' writes on the database behind {@code dataSource}, the DataSource Spring's transaction manager uses. */
    public static SpringFencedRows of(DataSource dataSource, FencedRows rows) {
        return new SpringFencedRows(dataSource, rows);
    }

    public FencedRows rows() {
        return rows;
    }

    /** {@link FencedRows#claim(Connection, Object, long)} in the current transaction, or committed on its own. */
    public void claim(Object id, long token) {
        write(connection -> {
            rows.claim(connection, id, token);
            return null;
        });
    }

    /** {@link FencedRows#confirm(Connection, Object, long)} in the current transaction, or committed on its own. */
    public void confirm(Object id, long token) {
        confirm(id, token, Map.of());
    }

    /** {@link FencedRows#confirm(Connection, Object, long, Map)} in the current transaction, or committed on its own. */
    public void confirm(Object id, long token, Map<String, ?> alsoSet) {
        write(connection -> {
            rows.confirm(connection, id, token, alsoSet);
            return null;
        });
    }

    /** {@link FencedRows#finish} in the current transaction, or committed on its own. */
    public void finish(Object id, long token, String toState, Map<String, ?> alsoSet) {
        write(connection -> {
            rows.finish(connection, id, token, toState, alsoSet);
            return null;
        });
    }

    /** {@link FencedRows#claimAll(Connection, List, long)} in the current transaction, or committed on its own. */
    public BatchClaim claimAll(List<?> ids, long token) {
        return write(connection -> rows.claimAll(connection, ids, token));
    }

    /** {@link FencedRows#confirmAll} in the current transaction, or committed on its own. */
    public BatchConfirm confirmAll(Map<?, ? extends Map<String, ?>> alsoSetById, long token) {
        return write(connection -> rows.confirmAll(connection, alsoSetById, token));
    }

    private <T> T write(Function<Connection, T> work) {
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            if (TransactionSynchronizationManager.isActualTransactionActive() && DataSourceUtils.isConnectionTransactional(connection, dataSource)) {
                return inTransaction(connection, work);
            }
            // No transaction of this DataSource: the connection is the thread's alone for this
            // write (or bound only for synchronisation, which never commits it).
            return inAutoCommit(connection, work);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }

    private <T> T inTransaction(Connection connection, Function<Connection, T> work) {
        try {
            return work.apply(connection);
        } catch (RuntimeException refusedOrFailed) {
            if (TransactionSynchronizationManager.getResource(dataSource) instanceof ConnectionHolder holder) {
                holder.setRollbackOnly();
            }
            throw refusedOrFailed;
        }
    }

    private static <T> T inAutoCommit(Connection connection, Function<Connection, T> work) {
        boolean found;
        try {
            found = connection.getAutoCommit();
            if (!found) {
                connection.setAutoCommit(true);
            }
        } catch (SQLException e) {
            throw new FencedDataAccessException("turning auto-commit on for a fenced write: " + e.getMessage(), e);
        }
        try {
            return work.apply(connection);
        } finally {
            if (!found) {
                try {
                    connection.setAutoCommit(false);
                } catch (SQLException brokenConnection) {
                    // the write was committed already; a connection that cannot take this back is broken, and its pool discards it
                }
            }
        }
    }
}
