package dev.fenced.settlement;

import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.FencedSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;

/** The worker's three writes on a refund row: fenced, or (for the negative control) not. */
interface RefundWrites {

    void claim(Connection connection, String id, long token) throws SQLException;

    void confirm(Connection connection, String id, long token, String gatewayReference) throws SQLException;

    void fail(Connection connection, String id, long token, String reason) throws SQLException;

    /** The article's design: the database refuses a stale token. */
    static RefundWrites fenced() {
        FencedRows rows = FencedRows.of(FencedSchema.refundTable());
        return new RefundWrites() {
            @Override
            public void claim(Connection connection, String id, long token) {
                rows.claim(connection, id, token);
            }

            @Override
            public void confirm(Connection connection, String id, long token, String gatewayReference) {
                rows.confirm(connection, id, token, Map.of("gateway_reference", gatewayReference));
            }

            @Override
            public void fail(Connection connection, String id, long token, String reason) {
                rows.finish(connection, id, token, "failed", Map.of("failure_reason", truncate(reason)));
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
            public void claim(Connection connection, String id, long token) throws SQLException {
                update(connection, "UPDATE refund SET state = 'sending', fence = ? WHERE id = ?", token, id);
            }

            @Override
            public void confirm(Connection connection, String id, long token, String gatewayReference) throws SQLException {
                update(connection, "UPDATE refund SET state = 'sent', gateway_reference = ? WHERE id = ?", gatewayReference, id);
            }

            @Override
            public void fail(Connection connection, String id, long token, String reason) throws SQLException {
                update(connection, "UPDATE refund SET state = 'failed', failure_reason = ? WHERE id = ?", truncate(reason), id);
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

    private static String truncate(String reason) {
        String text = reason == null ? "unknown" : reason;
        return text.length() <= 500 ? text : text.substring(0, 500);
    }
}
