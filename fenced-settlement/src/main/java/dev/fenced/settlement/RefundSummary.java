package dev.fenced.settlement;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * A merchant's refund rows at a glance: how many are in each state, the highest fence written on
 * them and their total amount. Read in one statement, so the three agree; writes nothing.
 */
public record RefundSummary(String merchant, Map<String, Long> rowsByState, long highestFence, BigDecimal totalAmount) {

    public RefundSummary {
        rowsByState = Collections.unmodifiableMap(new TreeMap<>(rowsByState));
    }

    public static RefundSummary of(DataSource dataSource, String merchant) {
        Merchants.requireValid(merchant);
        Map<String, Long> byState = new TreeMap<>();
        long highestFence = 0;
        BigDecimal total = BigDecimal.ZERO;
        try (Connection c = dataSource.getConnection();
             PreparedStatement s = c.prepareStatement(
                     "SELECT state, COUNT(*), COALESCE(MAX(fence), 0), COALESCE(SUM(amount), 0) FROM refund WHERE merchant = ? GROUP BY state")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    byState.put(rs.getString(1), rs.getLong(2));
                    highestFence = Math.max(highestFence, rs.getLong(3));
                    total = total.add(rs.getBigDecimal(4));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the refunds of " + merchant + ": " + e.getMessage(), e);
        }
        return new RefundSummary(merchant, byState, highestFence, total);
    }

    /** Rows in {@code state}; 0 when there are none. */
    public long count(String state) {
        return rowsByState.getOrDefault(state, 0L);
    }
}
