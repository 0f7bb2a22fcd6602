package dev.fenced.settlement;

import dev.fenced.FencedException;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Confirms from many threads, written together (group commit): a thread that finds no write
 * running writes every confirm waiting, in one call of {@link BatchWrite}, while the others wait
 * for their answer. Each caller learns its own row's refusal, or the batch's failure. With one
 * caller at a time a batch is that one confirm. Thread-safe; knows nothing of databases, so it is
 * tested alone.
 */
final class ConfirmBatcher {
    /** Writes a batch: gateway reference by refund id in, refusal by refund id out (absent: written). */
    @FunctionalInterface
    interface BatchWrite {
        Map<String, FencedException> write(Map<String, String> gatewayReferenceById) throws SQLException;
    }

    /** One confirm waiting in a batch, and its answer once written. */
    private static final class PendingConfirm {
        final String gatewayReference;
        boolean done;
        FencedException refusal;
        Throwable failure;

        PendingConfirm(String gatewayReference) {
            this.gatewayReference = gatewayReference;
        }

        void finish(FencedException refusal, Throwable failure) {
            this.refusal = refusal;
            this.failure = failure;
            this.done = true;
        }

        Optional<FencedException> result() throws SQLException {
            if (failure instanceof SQLException e) {
                throw e;
            }
            if (failure instanceof RuntimeException e) {
                throw e;
            }
            if (failure != null) {
                throw new IllegalStateException("the confirm batch failed: " + failure, failure);
            }
            return Optional.ofNullable(refusal);
        }
    }

    private final BatchWrite write;
    private final Object lock = new Object();
    private Map<String, PendingConfirm> waiting = new LinkedHashMap<>();
    private boolean writing;

    ConfirmBatcher(BatchWrite write) {
        this.write = write;
    }

    /** Blocks until the confirm is written; says why it was refused, if it was. */
    Optional<FencedException> confirm(String refundId, String gatewayReference) throws SQLException {
        PendingConfirm mine = new PendingConfirm(gatewayReference);
        Map<String, PendingConfirm> batch;
        boolean interrupted = false;
        synchronized (lock) {
            waiting.put(refundId, mine);
            while (writing && !mine.done) {
                try {
                    lock.wait();
                } catch (InterruptedException e) {
                    interrupted = true; // a confirm is not abandoned half-way
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            if (mine.done) {
                return mine.result();
            }
            writing = true;
            batch = waiting;
            waiting = new LinkedHashMap<>();
        }
        Map<String, FencedException> refusals = Map.of();
        Throwable failure = null;
        try {
            Map<String, String> references = new LinkedHashMap<>();
            batch.forEach((id, pending) -> references.put(id, pending.gatewayReference));
            refusals = write.write(references);
        } catch (Throwable e) {
            failure = e;
        } finally {
            synchronized (lock) {
                for (Map.Entry<String, PendingConfirm> entry : batch.entrySet()) {
                    entry.getValue().finish(refusals.get(entry.getKey()), failure);
                }
                writing = false;
                lock.notifyAll();
            }
        }
        return mine.result();
    }
}
