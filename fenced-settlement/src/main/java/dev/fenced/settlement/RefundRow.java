package dev.fenced.settlement;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * A refund row as the worker read it: what is sent to the gateway, under which key, its state then,
 * and the deployment its database belongs to.
 */
record RefundRow(String id, String merchant, BigDecimal amount, String currency, String idempotencyKey, String state, String deployment) {
    boolean pending() {
        return state.equals("pending");
    }

    /** Whose a refund for this row is: sent with it as metadata, checked on every refund found under its key. */
    RefundOwner owner() {
        return new RefundOwner(deployment, merchant, id);
    }

    /**
     * The merchant's rows still to settle, pending or sending, in their order.
     *
     * @throws IllegalStateException when the database has no deployment id: it was not migrated
     */
    static List<RefundRow> unsettled(DataSource dataSource, String merchant) throws SQLException {
        List<RefundRow> rows = new ArrayList<>();
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement(
                     "SELECT id, merchant, amount, currency, idempotency_key, state FROM refund"
                             + " WHERE merchant = ? AND state IN ('pending', 'sending') ORDER BY seq")) {
            String deployment = RefundOwner.deploymentOf(connection);
            if (deployment == null) {
                throw new IllegalStateException("the database has no deployment id (table " + RefundOwner.TABLE
                        + "): migrate it (RefundSchema.migrate, fenced migrate)");
            }
            statement.setString(1, merchant);
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    rows.add(new RefundRow(rs.getString(1), rs.getString(2), rs.getBigDecimal(3), rs.getString(4), rs.getString(5),
                            rs.getString(6), deployment));
                }
            }
        }
        return rows;
    }

    /** The merchant's confirmed refunds, as the journal lines they should have: the token is the row's fence, the token that confirmed it. */
    static List<JournalLine> confirmed(DataSource dataSource, String merchant) throws SQLException {
        List<JournalLine> lines = new ArrayList<>();
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement(
                     "SELECT id, amount, currency, gateway_reference, fence FROM refund WHERE merchant = ? AND state = 'sent' ORDER BY seq")) {
            statement.setString(1, merchant);
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    lines.add(new JournalLine(0, merchant, rs.getString(1), rs.getBigDecimal(2), rs.getString(3), rs.getString(4), rs.getLong(5), 0));
                }
            }
        }
        return lines;
    }
}
