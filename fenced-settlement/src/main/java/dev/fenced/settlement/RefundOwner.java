package dev.fenced.settlement;

import dev.fenced.provider.GatewayRefund;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

/**
 * Whose a refund at the gateway is: this database's deployment (the one id in table
 * {@value #TABLE}, made by migration), the merchant and the refund row. The worker sends it as the
 * refund's metadata; a refund under a row's key that names another owner is not the row's, however
 * well its merchant and amount match: another deployment sharing the gateway made it under the same
 * key. Keys are unique within one database only, and rows that existed before keys were kept on the
 * row have their refund id as key.
 *
 * <p>Limit: a refund that names no owner (made before owners were recorded, or through a
 * {@link dev.fenced.provider.RefundGateway} that drops metadata) cannot be told apart, and is taken
 * as the row's, as before.
 */
record RefundOwner(String deployment, String merchant, String refundId) {
    static final String TABLE = "settlement_deployment";
    static final String DEPLOYMENT = "deployment";
    static final String MERCHANT = "merchant";
    static final String REFUND = "refund";

    Map<String, String> metadata() {
        return Map.of(DEPLOYMENT, deployment, MERCHANT, merchant, REFUND, refundId);
    }

    /** Null when {@code refund} is this owner's or names no owner; otherwise whose it is, for a person. */
    String disowns(GatewayRefund refund) {
        Map<String, String> owner = refund.metadata();
        String other = owner.get(DEPLOYMENT);
        if (other == null || (other.equals(deployment) && merchant.equals(owner.get(MERCHANT)) && refundId.equals(owner.get(REFUND)))) {
            return null;
        }
        return "gateway refund " + refund.id() + " under key " + refund.idempotencyKey() + " belongs to deployment " + other
                + ", merchant " + owner.get(MERCHANT) + ", refund " + owner.get(REFUND) + "; the row is deployment "
                + (deployment == null ? "(none: not migrated)" : deployment) + ", merchant " + merchant + ", refund " + refundId;
    }

    /** This database's deployment id; null when no migration made one (a database a reader may not migrate). */
    static String deploymentOf(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery("SELECT MIN(id) FROM " + TABLE)) {
            return rs.next() ? rs.getString(1) : null;
        } catch (SQLException e) {
            // 42P01 (PostgreSQL) and 42S02 (MariaDB): no such table.
            if ("42P01".equals(e.getSQLState()) || "42S02".equals(e.getSQLState())) {
                return null;
            }
            throw e;
        }
    }
}
