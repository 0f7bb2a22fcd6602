package dev.fenced.spring;

import dev.fenced.jdbc.FencedTransactions;
import dev.fenced.jdbc.StaleTransactionException;
import java.sql.Connection;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@link FencedTransactions} inside a transaction Spring manages ({@code TransactionTemplate},
 * {@code @Transactional} with a {@code DataSourceTransactionManager} or {@code JdbcTransactionManager}):
 * {@link #enter(String, long)} fences the transaction Spring has bound to the calling thread for
 * this DataSource, so that whatever it writes through {@code JdbcTemplate} or the bound connection
 * commits only under the newest token.
 *
 * <p>On a refusal the transaction is rolled back and marked rollback-only before the
 * {@link StaleTransactionException} leaves: a caller that catches it and returns normally commits
 * nothing. What it does not cover: writes through another DataSource or another transaction
 * manager (JPA's {@code EntityManager} flushes through its own connection handling; enter there
 * with {@link FencedTransactions#enter} on the session's connection). Thread-safe.
 */
public final class SpringFencedTransactions {
    private final DataSource dataSource;
    private final FencedTransactions fences;

    private SpringFencedTransactions(DataSource dataSource, FencedTransactions fences) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.fences = Objects.requireNonNull(fences, "fences");
    }

    /** Guards in {@code fence_guard} of the database behind {@code dataSource}. */
    public static SpringFencedTransactions of(DataSource dataSource) {
        return new SpringFencedTransactions(dataSource, FencedTransactions.create());
    }

    public static SpringFencedTransactions of(DataSource dataSource, FencedTransactions fences) {
        return new SpringFencedTransactions(dataSource, fences);
    }

    /**
     * Whether a Spring transaction on this DataSource is active on this thread: one whose connection
     * is bound and synchronized with it (a transaction of another manager, or on another DataSource,
     * is not).
     */
    public boolean isBoundToTransaction() {
        return TransactionSynchronizationManager.isActualTransactionActive()
                && TransactionSynchronizationManager.getResource(dataSource) instanceof ConnectionHolder holder
                && holder.isSynchronizedWithTransaction();
    }

    /**
     * Enters the current Spring transaction under {@code token} for {@code resource}.
     *
     * @throws IllegalStateException     when no Spring transaction is active on this thread
     * @throws StaleTransactionException when a newer token has entered; the transaction is rolled back and rollback-only
     */
    public void enter(String resource, long token) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalStateException("fencing " + resource + " needs an active Spring transaction on this thread"
                    + " (TransactionTemplate or @Transactional)");
        }
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            fences.enter(connection, resource, token);
        } catch (RuntimeException refusedOrFailed) {
            if (TransactionSynchronizationManager.getResource(dataSource) instanceof ConnectionHolder holder) {
                holder.setRollbackOnly();
            }
            throw refusedOrFailed;
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }
}
