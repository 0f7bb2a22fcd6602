package dev.fenced.settlement;

import dev.fenced.FenceViolation;
import dev.fenced.FencedException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;

/**
 * A run's writes on its rows, each through the worker's {@link RefundWrites} under the run's token:
 * claims in one transaction (all or none), confirms as one auto-committed batch, and the fenced
 * moves of a claimed row to {@code failed} or back to {@code pending}. Each is committed before the
 * run reports it, whatever auto-commit the pool hands out, and the connection goes back as it came.
 * It only writes and says what happened: counting and reporting are the caller's.
 */
final class RunWrites {
    private final DataSource dataSource;
    private final RefundWrites writes;
    private final long token;
    private final SettlementWorker.PhaseHook hook;

    RunWrites(DataSource dataSource, RefundWrites writes, long token, SettlementWorker.PhaseHook hook) {
        this.dataSource = dataSource;
        this.writes = writes;
        this.token = token;
        this.hook = hook;
    }

    long token() {
        return token;
    }

    /** What a claim of several rows came to: all claimed (less those found finished), or none. */
    sealed interface ClaimResult {
        /**
         * The claim committed. {@code claimed} are the rows now this run's; {@code finishedEarlier} were left out,
         * finished by an earlier holder after this run read them; of those, {@code failedEarlier} it finished as failed.
         */
        record Claimed(List<String> claimed, List<String> finishedEarlier, Set<String> failedEarlier) implements ClaimResult {
        }

        /** A row was refused (the first one is named): the claim was rolled back whole, nothing changed. */
        record Refused(String refundId, FencedException refusal) implements ClaimResult {
        }
    }

    /** A definitive refusal: the claimed row becomes failed with the reason, under the same fence as a confirm. */
    void markFailed(String refundId, String reason) throws SQLException {
        inAutoCommit(connection -> {
            writes.fail(connection, refundId, token, reason);
            return null;
        });
    }

    /** Nothing of the claimed row reached the gateway: back to pending, fenced, for the next run. */
    void putBack(String refundId) throws SQLException {
        inAutoCommit(connection -> {
            writes.release(connection, refundId, token);
            return null;
        });
    }

    /**
     * Claims the rows in one transaction. A row an earlier holder finished is left out and named in
     * the result; any other refusal rolls the whole claim back and is the result.
     */
    ClaimResult claim(List<String> ids) throws SQLException {
        List<String> finishedEarlier = new ArrayList<>();
        Set<String> failedEarlier = new HashSet<>();
        Map<String, FencedException> refusals = inTransaction(connection -> {
            Map<String, FencedException> refused = new LinkedHashMap<>();
            writes.claimAll(connection, ids, token).forEach((id, refusal) -> {
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
                connection.rollback();
            } else {
                hook.reached(SettlementWorker.Phase.IN_CLAIM, ids.get(0));
            }
            return refused;
        });
        if (!refusals.isEmpty()) {
            Map.Entry<String, FencedException> first = refusals.entrySet().iterator().next();
            return new ClaimResult.Refused(first.getKey(), first.getValue());
        }
        List<String> claimed = new ArrayList<>(ids);
        claimed.removeAll(finishedEarlier);
        return new ClaimResult.Claimed(List.copyOf(claimed), List.copyOf(finishedEarlier), Set.copyOf(failedEarlier));
    }

    /** A lower token finished the row after this run read it: not stale, just done. */
    private boolean finishedByAnEarlierHolder(FencedException refusal) {
        return refusal instanceof FenceViolation v && v.storedFence() != null && v.storedFence() < token
                && ("sent".equals(v.storedState()) || "failed".equals(v.storedState())
                || "settled".equals(v.storedState()) || "returned".equals(v.storedState()));
    }

    private <T> T inTransaction(TransactionWork<T> work) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
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
        return withoutOwnConfirms(inAutoCommit(connection -> writes.confirmAll(connection, gatewayReferenceById, token)),
                gatewayReferenceById, 0);
    }

    /**
     * The confirms of several runs on one data source and one {@link RefundWrites}, in one
     * auto-committed batch, each row under its own run's token, the batch bounded by {@code wait}.
     * A refused row does not undo the others. When it throws, some rows may have been written:
     * {@link #writeConfirmAgain} tells them apart.
     */
    static Map<RunWrites, Map<String, FencedException>> writeConfirmsTogether(Map<RunWrites, Map<String, String>> byRun, Duration wait)
            throws SQLException {
        RunWrites first = byRun.keySet().iterator().next();
        // Tokens count per merchant: two merchants' runs may hold the same number, their refund ids differ.
        Map<Long, Map<String, String>> byToken = new LinkedHashMap<>();
        byRun.forEach((run, references) -> byToken.computeIfAbsent(run.token, t -> new LinkedHashMap<>()).putAll(references));
        Map<Long, Map<String, FencedException>> refusedByToken =
                first.inAutoCommit(connection -> first.writes.confirmEach(connection, byToken, wait));
        Map<RunWrites, Map<String, FencedException>> refusedByRun = new LinkedHashMap<>();
        for (Map.Entry<RunWrites, Map<String, String>> run : byRun.entrySet()) {
            Map<String, FencedException> refused = new LinkedHashMap<>(refusedByToken.getOrDefault(run.getKey().token, Map.of()));
            refused.keySet().retainAll(run.getValue().keySet());
            // In whole seconds, rounded up as the batch's own bound is: a wait under a second must not read as none.
            refusedByRun.put(run.getKey(), run.getKey().withoutOwnConfirms(refused, run.getValue(), Math.max(1, (wait.toMillis() + 999) / 1000)));
        }
        return refusedByRun;
    }

    /**
     * One confirm written again by itself, after a batch it was in failed. A row the batch wrote is
     * found confirmed under this run's token with this reference, and is not refused
     * ({@link #withoutOwnConfirms}). A row the batch refused is refused again: its fence has moved
     * past this token, and never comes back, or it holds another reference under this token.
     */
    Optional<FencedException> writeConfirmAgain(String refundId, String gatewayReference) throws SQLException {
        return Optional.ofNullable(writeConfirms(Map.of(refundId, gatewayReference)).get(refundId));
    }

    /** The states a row confirmed under a token can hold under that token. */
    private static final Set<String> CONFIRMED_OR_LATER = Set.of("sent", "settled", "returned");

    /**
     * {@code refusals} without the rows this confirm already wrote: a row that holds {@code sent}
     * or a later state ({@code settled}, {@code returned}: {@link RefundLifecycle} keeps the fence)
     * under this run's token and with this confirm's gateway reference holds what the confirm
     * writes. A driver that counts no rows (MariaDB's bulk protocol) makes a batch read its rows
     * back, and a webhook may settle one in between; a confirm written again after its batch
     * failed finds the batch's row so. Only such rows are read again, for their reference, within
     * {@code waitSeconds} as the batch was (0: the data source's bounds): a row under this token
     * with another reference (a holder granted the same token, and a second refund) stays refused,
     * as does any fence but this token, or any other state. With a driver that counts no rows the
     * jdbc layer has already taken a row it found {@code sent} under the token as confirmed: it
     * reads no reference.
     */
    private Map<String, FencedException> withoutOwnConfirms(Map<String, FencedException> refusals, Map<String, String> referenceById,
                                                            long waitSeconds) throws SQLException {
        List<String> confirmedUnderThisToken = new ArrayList<>();
        refusals.forEach((id, refusal) -> {
            if (refusal instanceof FenceViolation v && v.storedFence() != null && v.storedFence() == token
                    && CONFIRMED_OR_LATER.contains(v.storedState())) {
                confirmedUnderThisToken.add(id);
            }
        });
        if (confirmedUnderThisToken.isEmpty()) {
            return refusals;
        }
        Map<String, String> stored = inAutoCommit(connection -> RefundRow.gatewayReferences(connection, confirmedUnderThisToken, waitSeconds));
        Map<String, FencedException> refused = new LinkedHashMap<>(refusals);
        for (String id : confirmedUnderThisToken) {
            if (referenceById.get(id) != null && referenceById.get(id).equals(stored.get(id))) {
                refused.remove(id);
            }
        }
        return refused;
    }

    /** Runs {@code work} on a connection of its own in auto-commit, whatever the pool hands out; the connection goes back as it came. */
    private <T> T inAutoCommit(TransactionWork<T> work) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = autoCommitOn(connection);
            try {
                return work.run(connection);
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
    static boolean autoCommitOn(Connection connection) throws SQLException {
        boolean found = connection.getAutoCommit();
        if (!found) {
            connection.setAutoCommit(true);
        }
        return found;
    }

    /** Puts auto-commit back as found; a connection that cannot take it is broken, and the pool discards it. */
    static void restore(Connection connection, boolean autoCommit) {
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
