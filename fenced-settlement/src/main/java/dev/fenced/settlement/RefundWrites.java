package dev.fenced.settlement;

import dev.fenced.FencedException;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.FencedSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The worker's writes on refund rows: fenced, or (for the negative control) not. The batch
 * methods return the refused ids with the reason for each; an empty map means every row was written.
 * They run in the caller's transaction.
 */
interface RefundWrites {

    Map<String, FencedException> claimAll(Connection connection, List<String> ids, long token) throws SQLException;

    Map<String, FencedException> confirmAll(Connection connection, Map<String, String> gatewayReferenceById, long token)
            throws SQLException;

    void fail(Connection connection, String id, long token, String reason) throws SQLException;

    /** Puts a claimed row back to {@code pending}: no request for it reached the gateway. */
    void release(Connection connection, String id, long token) throws SQLException;

    /** The article's design: the database refuses a stale token. */
    static RefundWrites fenced() {
        FencedRows rows = FencedRows.of(FencedSchema.refundTable());
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
            public void fail(Connection connection, String id, long token, String reason) {
                rows.finish(connection, id, token, "failed", Map.of("failure_reason", truncate(reason)));
            }

            @Override
            public void release(Connection connection, String id, long token) {
                rows.finish(connection, id, token, "pending", Map.of());
            }
        };
    }

    /**
     * What a worker that trusts its lease writes: the token is recorded but not checked, so a
     * stale holder's writes are accepted. Only for demonstrating the damage.
     */
    static RefundWrites unfenced() {
        return new RefundWrites() {
            @Override
            public Map<String, FencedException> claimAll(Connection connection, List<String> ids, long token) throws SQLException {
                for (String id : ids) {
                    update(connection, "UPDATE refund SET state = 'sending', fence = ? WHERE id = ?", token, id);
                }
                return Map.of();
            }

            @Override
            public Map<String, FencedException> confirmAll(Connection connection, Map<String, String> gatewayReferenceById, long token)
                    throws SQLException {
                for (Map.Entry<String, String> confirm : gatewayReferenceById.entrySet()) {
                    update(connection, "UPDATE refund SET state = 'sent', gateway_reference = ? WHERE id = ?", confirm.getValue(),
                            confirm.getKey());
                }
                return Map.of();
            }

            @Override
            public void fail(Connection connection, String id, long token, String reason) throws SQLException {
                update(connection, "UPDATE refund SET state = 'failed', failure_reason = ? WHERE id = ?", truncate(reason), id);
            }

            @Override
            public void release(Connection connection, String id, long token) throws SQLException {
                update(connection, "UPDATE refund SET state = 'pending', fence = ? WHERE id = ?", token, id);
            }

            private void update(Connection connection, String sql, Object first, String id) throws SQLException {
                try (PreparedStatement statement = connection.prepareStatement(sql)) {
                    statement.setObject(1, first);
                    statement.setString(2, id);
                    statement.executeUpdate();
                }
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

    private static String truncate(String reason) {
        String text = reason == null ? "unknown" : reason;
        return text.length() <= 500 ? text : text.substring(0, 500);
    }
}
