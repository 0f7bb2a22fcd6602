package dev.fenced.settlement;

import dev.fenced.FencedException;
import dev.fenced.jdbc.FencedRows;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The settlement worker's writes on refund rows. {@link #fenced()}, the only implementation this
 * module ships, makes the database refuse every write of a stale token; the lab (module
 * {@code fenced-lab}) implements weaker ones to measure what they lose, through
 * {@link WorkerVariant}. The batch methods return the refused ids with the reason for each; an
 * empty map means every row was written. They run in the caller's transaction.
 */
public interface RefundWrites {

    Map<String, FencedException> claimAll(Connection connection, List<String> ids, long token) throws SQLException;

    Map<String, FencedException> confirmAll(Connection connection, Map<String, String> gatewayReferenceById, long token)
            throws SQLException;

    /**
     * The confirms of several runs in one batch, each row under its run's token: refusals by token,
     * then by id (empty: every row written). {@code wait} bounds the batch; rows of a batch that
     * failed may have been written. The default confirms each token's rows with
     * {@link #confirmAll}, one batch after another, and bounds nothing.
     */
    default Map<Long, Map<String, FencedException>> confirmEach(Connection connection, Map<Long, Map<String, String>> gatewayReferenceByIdByToken,
                                                                Duration wait) throws SQLException {
        Map<Long, Map<String, FencedException>> refusals = new LinkedHashMap<>();
        for (Map.Entry<Long, Map<String, String>> run : gatewayReferenceByIdByToken.entrySet()) {
            refusals.put(run.getKey(), confirmAll(connection, run.getValue(), run.getKey()));
        }
        return refusals;
    }

    /**
     * True when {@link #confirmEach} bounds its batch by {@code wait}: only then do a process's runs
     * share one committer, which a batch with no bound of its own could hold up for all of them.
     */
    default boolean boundsConfirmEach() {
        return false;
    }

    void fail(Connection connection, String id, long token, String reason) throws SQLException;

    /** Puts a claimed row back to {@code pending}: no request for it reached the gateway. */
    void release(Connection connection, String id, long token) throws SQLException;

    /** The article's design: the database refuses a stale token. */
    static RefundWrites fenced() {
        FencedRows rows = FencedRows.of(RefundSchema.table());
        return new RefundWrites() {
            @Override
            public Map<String, FencedException> claimAll(Connection connection, List<String> ids, long token) {
                return byId(rows.claimAll(connection, ids, token).refusals());
            }

            @Override
            public Map<String, FencedException> confirmAll(Connection connection, Map<String, String> gatewayReferenceById, long token) {
                Map<String, Map<String, String>> alsoSet = new LinkedHashMap<>();
                gatewayReferenceById.forEach((id, reference) -> alsoSet.put(id, Map.of("gateway_reference", reference)));
                return byId(rows.confirmAll(connection, alsoSet, token).refusals());
            }

            @Override
            public Map<Long, Map<String, FencedException>> confirmEach(Connection connection,
                                                                       Map<Long, Map<String, String>> gatewayReferenceByIdByToken, Duration wait) {
                Map<Long, Map<String, Map<String, String>>> alsoSet = new LinkedHashMap<>();
                gatewayReferenceByIdByToken.forEach((token, references) -> {
                    Map<String, Map<String, String>> byId = alsoSet.computeIfAbsent(token, t -> new LinkedHashMap<>());
                    references.forEach((id, reference) -> byId.put(id, Map.of("gateway_reference", reference)));
                });
                Map<Long, Map<String, FencedException>> refusals = new LinkedHashMap<>();
                rows.confirmEach(connection, alsoSet, wait).forEach((token, confirm) -> refusals.put(token, byId(confirm.refusals())));
                return refusals;
            }

            @Override
            public boolean boundsConfirmEach() {
                return true;
            }

            @Override
            public void fail(Connection connection, String id, long token, String reason) {
                rows.finish(connection, id, token, "failed", Map.of("failure_reason", boundedReason(reason)));
            }

            @Override
            public void release(Connection connection, String id, long token) {
                rows.finish(connection, id, token, "pending", Map.of());
            }
        };
    }

    private static Map<String, FencedException> byId(Map<Object, FencedException> refusals) {
        if (refusals.isEmpty()) {
            return Map.of();
        }
        Map<String, FencedException> byId = new LinkedHashMap<>();
        refusals.forEach((id, refusal) -> byId.put(String.valueOf(id), refusal));
        return Collections.unmodifiableMap(byId);
    }

    /** A failure reason as stored: at most 500 characters, never null. */
    static String boundedReason(String reason) {
        String text = reason == null ? "unknown" : reason;
        return text.length() <= 500 ? text : text.substring(0, 500);
    }
}
