package dev.fenced.settlement;

import dev.fenced.provider.MinorUnits;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * A merchant's refund rows at a glance: how many are in each state, the highest fence written on
 * them and their total amount, with as many decimals as its currencies have. Read in one
 * statement, so the three agree; writes nothing.
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
        int decimals = 0;
        try (Connection c = dataSource.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT state, currency, COUNT(*), COALESCE(MAX(fence), 0), COALESCE(SUM(amount), 0)"
                     + " FROM refund WHERE merchant = ? GROUP BY state, currency")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    byState.merge(rs.getString(1), rs.getLong(3), Long::sum);
                    decimals = Math.max(decimals, decimals(rs.getString(2)));
                    highestFence = Math.max(highestFence, rs.getLong(4));
                    total = total.add(rs.getBigDecimal(5));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the refunds of " + merchant + ": " + e.getMessage(), e);
        }
        return new RefundSummary(merchant, byState, highestFence, written(total, decimals));
    }

    /** Whether the merchant has any refund row at all, in any state: a mistyped merchant id has none. */
    public static boolean exists(DataSource dataSource, String merchant) {
        Merchants.requireValid(merchant);
        try (Connection c = dataSource.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT 1 FROM refund WHERE merchant = ? LIMIT 1")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                return rs.next();
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the refunds of " + merchant + ": " + e.getMessage(), e);
        }
    }

    /**
     * One page of every merchant's summary, in merchant order: {@code limit} merchants from
     * {@code offset}. Two statements (the page's merchants, then their rows grouped); a merchant
     * whose rows change between the two shows what the second read.
     */
    public static List<RefundSummary> page(DataSource dataSource, int offset, int limit) {
        if (offset < 0 || limit < 1) {
            throw new IllegalArgumentException("a page needs offset >= 0 and limit >= 1, got " + offset + " and " + limit);
        }
        try (Connection c = dataSource.getConnection()) {
            List<String> merchants = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement("SELECT DISTINCT merchant FROM refund ORDER BY merchant LIMIT ? OFFSET ?")) {
                s.setInt(1, limit);
                s.setInt(2, offset);
                try (ResultSet rs = s.executeQuery()) {
                    while (rs.next()) {
                        merchants.add(rs.getString(1));
                    }
                }
            }
            if (merchants.isEmpty()) {
                return List.of();
            }
            Map<String, Map<String, Long>> byState = new LinkedHashMap<>();
            Map<String, Long> fences = new LinkedHashMap<>();
            Map<String, BigDecimal> totals = new LinkedHashMap<>();
            Map<String, Integer> decimals = new LinkedHashMap<>();
            String marks = String.join(", ", Collections.nCopies(merchants.size(), "?"));
            try (PreparedStatement s = c.prepareStatement("SELECT merchant, state, currency, COUNT(*), COALESCE(MAX(fence), 0),"
                    + " COALESCE(SUM(amount), 0) FROM refund WHERE merchant IN (" + marks + ") GROUP BY merchant, state, currency")) {
                for (int i = 0; i < merchants.size(); i++) {
                    s.setString(i + 1, merchants.get(i));
                }
                try (ResultSet rs = s.executeQuery()) {
                    while (rs.next()) {
                        String merchant = rs.getString(1);
                        byState.computeIfAbsent(merchant, m -> new TreeMap<>()).merge(rs.getString(2), rs.getLong(4), Long::sum);
                        decimals.merge(merchant, decimals(rs.getString(3)), Math::max);
                        fences.merge(merchant, rs.getLong(5), Math::max);
                        totals.merge(merchant, rs.getBigDecimal(6), BigDecimal::add);
                    }
                }
            }
            return merchants.stream().map(m -> new RefundSummary(m, byState.getOrDefault(m, Map.of()), fences.getOrDefault(m, 0L),
                    written(totals.getOrDefault(m, BigDecimal.ZERO), decimals.getOrDefault(m, 0)))).toList();
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the refunds: " + e.getMessage(), e);
        }
    }

    /** The decimals {@code currency} has; a code ISO 4217 does not know shows as many as the table keeps. */
    private static int decimals(String currency) {
        try {
            return MinorUnits.digits(currency);
        } catch (IllegalArgumentException e) {
            return MinorUnits.MAX_DIGITS;
        }
    }

    /** The total with its currencies' decimals (843.00 EUR, not the column's 843.000), and never fewer than it has: nothing is rounded. */
    private static BigDecimal written(BigDecimal total, int decimals) {
        return total.setScale(Math.max(decimals, total.stripTrailingZeros().scale()));
    }

    /** How many merchants have refund rows. */
    public static int merchantCount(DataSource dataSource) {
        try (Connection c = dataSource.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT COUNT(DISTINCT merchant) FROM refund");
             ResultSet rs = s.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        } catch (SQLException e) {
            throw new IllegalStateException("could not count the merchants: " + e.getMessage(), e);
        }
    }

    /** Rows in {@code state}; 0 when there are none. */
    public long count(String state) {
        return rowsByState.getOrDefault(state, 0L);
    }
}
