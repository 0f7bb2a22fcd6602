package dev.fenced.settlement;

import dev.fenced.FenceViolation;
import dev.fenced.FencedException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A run's writes on its rows, each through the worker's {@link RefundWrites} under the run's token:
 * claims in one transaction (all or none), confirms as one auto-committed batch, and the fenced
 * moves of a claimed row to {@code failed} or back to {@code pending}. Each is committed before the
 * run reports it, whatever auto-commit the pool hands out, and the connection goes back as it came.
 */
final class RunWrites {
    private final SettlementRun run;

    RunWrites(SettlementRun run) {
        this.run = run;
    }

    /** A definitive refusal: the claimed row becomes failed with the reason, under the same fence as a confirm. */
    void markFailed(String refundId, String reason) throws SQLException {
        try (Connection connection = run.worker.dataSource.getConnection()) {
            boolean autoCommit = autoCommitOn(connection);
            try {
                run.worker.writes.fail(connection, refundId, run.token, reason);
            } finally {
                restore(connection, autoCommit);
            }
        }
        run.failed.incrementAndGet();
        run.emit(SettlementEvent.Type.FAILED, refundId, reason);
    }

    /** Nothing of the claimed row reached the gateway: back to pending, fenced, for the next run. */
    void putBack(String refundId, String why) throws SQLException {
        try (Connection connection = run.worker.dataSource.getConnection()) {
            boolean autoCommit = autoCommitOn(connection);
            try {
                run.worker.writes.release(connection, refundId, run.token);
            } finally {
                restore(connection, autoCommit);
            }
        }
        run.emit(SettlementEvent.Type.LEFT, refundId, "pending: " + why);
    }

    /**
     * Claims the rows in one transaction and returns the ids claimed; null when a row was
     * refused (the claim is rolled back whole and the refusal recorded). A row an earlier holder
     * finished is left out and counted as skipped; one it finished as failed also as failed elsewhere.
     */
    List<String> claim(List<String> ids) throws SQLException {
        List<String> finishedEarlier = new ArrayList<>();
        List<String> failedEarlier = new ArrayList<>();
        Map<String, FencedException> refusals = inTransaction(connection -> {
            Map<String, FencedException> refused = new LinkedHashMap<>();
            run.worker.writes.claimAll(connection, ids, run.token).forEach((id, refusal) -> {
                if (finishedByAnEarlierHolder(refusal)) {
                    finishedEarlier.add(id);
                    if ("failed".equals(((FenceViolation) refusal).storedState())) {
                        failedEarlier.add(id);
                    }
                } else {
                    refused.put(id, refusal);
                }
            });
            if (!refused.isEmpty()) {
                finishedEarlier.clear();
                failedEarlier.clear();
                connection.rollback();
            } else {
                run.worker.hook.reached(SettlementWorker.Phase.IN_CLAIM, ids.get(0));
            }
            return refused;
        });
        if (!refusals.isEmpty()) {
            Map.Entry<String, FencedException> first = refusals.entrySet().iterator().next();
            run.refused(first.getKey(), first.getValue());
            return null;
        }
        for (String id : finishedEarlier) {
            if (failedEarlier.contains(id)) {
                // Refused, not paid: counted apart so that the run does not report the batch settled.
                run.failedElsewhere.add(id);
            }
            run.skipped.add(id);
            run.emit(SettlementEvent.Type.SKIPPED, id, failedEarlier.contains(id) ? "failed by an earlier holder" : "finished by an earlier holder");
        }
        List<String> claimed = new ArrayList<>(ids);
        claimed.removeAll(finishedEarlier);
        return claimed;
    }

    /** A lower token finished the row after this run read it: not stale, just done. */
    boolean finishedByAnEarlierHolder(FencedException refusal) {
        return refusal instanceof FenceViolation v && v.storedFence() != null && v.storedFence() < run.token
                && ("sent".equals(v.storedState()) || "failed".equals(v.storedState()));
    }

    <T> T inTransaction(TransactionWork<T> work) throws SQLException {
        try (Connection connection = run.worker.dataSource.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(false);
            try {
                T result = work.run(connection);
                connection.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                try {
                    connection.rollback();
                } catch (SQLException rollbackFailed) {
                    e.addSuppressed(rollbackFailed);
                }
                throw e;
            } finally {
                connection.setAutoCommit(autoCommit);
            }
        }
    }

    /** A batch of confirms in auto-commit: a refused row does not undo the others, whose gateway calls were made. */
    Map<String, FencedException> writeConfirms(Map<String, String> gatewayReferenceById) throws SQLException {
        // PostgreSQL commits the whole batch at its one Sync message, so a batch costs one round trip.
        try (Connection connection = run.worker.dataSource.getConnection()) {
            boolean autoCommit = autoCommitOn(connection);
            try {
                return run.worker.writes.confirmAll(connection, gatewayReferenceById, run.token);
            } finally {
                restore(connection, autoCommit);
            }
        }
    }

    /**
     * Turns auto-commit on and says what it was, to be put back once the write is done: a pool
     * that hands out {@code autoCommit=false} (common in Spring applications) rolls back, when the
     * connection goes back, a write nobody committed, while the run would report it written.
     */
    private static boolean autoCommitOn(Connection connection) throws SQLException {
        boolean found = connection.getAutoCommit();
        if (!found) {
            connection.setAutoCommit(true);
        }
        return found;
    }

    /** Puts auto-commit back as found; a connection that cannot take it is broken, and the pool discards it. */
    private static void restore(Connection connection, boolean autoCommit) {
        try {
            if (!autoCommit) {
                connection.setAutoCommit(false);
            }
        } catch (SQLException brokenConnection) {
            // the write was committed already; its outcome, not this, is what the run reports
        }
    }

    @FunctionalInterface
    private interface TransactionWork<T> {
        T run(Connection connection) throws SQLException;
    }
}
