package dev.fenced.lab;

import dev.fenced.FencedException;
import dev.fenced.settlement.RefundWrites;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;

/**
 * What a worker that trusts its lease writes: the token is recorded but never checked, so a stale
 * holder's writes are accepted. The lab's negative control and the writes of every mechanism
 * without a fence; nothing outside the lab can reach it.
 */
final class UnfencedRefundWrites implements RefundWrites {
    static final UnfencedRefundWrites INSTANCE = new UnfencedRefundWrites();

    private UnfencedRefundWrites() {
    }

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
            update(connection, "UPDATE refund SET state = 'sent', gateway_reference = ? WHERE id = ?", confirm.getValue(), confirm.getKey());
        }
        return Map.of();
    }

    @Override
    public void fail(Connection connection, String id, long token, String reason) throws SQLException {
        update(connection, "UPDATE refund SET state = 'failed', failure_reason = ? WHERE id = ?", RefundWrites.boundedReason(reason), id);
    }

    @Override
    public void release(Connection connection, String id, long token) throws SQLException {
        update(connection, "UPDATE refund SET state = 'pending', fence = ? WHERE id = ?", token, id);
    }

    private static void update(Connection connection, String sql, Object first, String id) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setObject(1, first);
            statement.setString(2, id);
            statement.executeUpdate();
        }
    }
}
