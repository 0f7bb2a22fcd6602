package dev.fenced.spring;

import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;

/**
 * Enters the guard of every Spring transaction that begins inside a {@link FencedLock} method, with
 * that method's token (a transaction already active when the lease is taken is entered by the
 * interceptor). Registered on the transaction manager (Spring Boot adds every
 * {@link TransactionExecutionListener} bean to its own). Read-only transactions, transactions on
 * another DataSource, and new transactions while one of the call's guarded transactions is still
 * open are left alone (see {@code FencedContext.Frame#mustEnter}). A refusal cannot be thrown from
 * here without leaving the begun transaction bound to the thread: the transaction is marked
 * rollback-only, so nothing of it commits, and the call ends with the refusal once the method returns.
 */
public final class FencedLockTransactions implements TransactionExecutionListener {

    @Override
    public void afterBegin(TransactionExecution transaction, Throwable beginFailure) {
        FencedContext.Frame frame = FencedContext.innermost();
        if (beginFailure != null || frame == null || !frame.mustEnter(transaction.isReadOnly())) {
            return;
        }
        try {
            frame.enter();
        } catch (RuntimeException refused) {
            transaction.setRollbackOnly();
            frame.refusedAtBegin(refused);
        }
    }
}
