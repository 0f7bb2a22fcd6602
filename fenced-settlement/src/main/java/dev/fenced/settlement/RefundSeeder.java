package dev.fenced.settlement;

import dev.fenced.StoreUnavailableException;
import dev.fenced.provider.MinorUnits;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Seeds a merchant's pending refunds with deterministic amounts that sum exactly to a total, each
 * in its currency's minor units (ISO 4217: JPY none, EUR two, KWD three decimals; never rounded).
 *
 * <p>Amounts are the total split evenly, then moved in pairs by a deterministic offset (one
 * refund gains what its partner loses), so the sum never changes. Every fifth refund keeps the
 * even share: with the article's 1,200 refunds and 84,300.00 EUR, r_815 is 70.25.
 */
public final class RefundSeeder {
    private static final int BATCH = 500;
    /** The largest amount in a currency with two decimals: ten digits before the decimal point ({@link MinorUnits}). */
    public static final BigDecimal MAX_AMOUNT = new BigDecimal("9999999999.99");
    private static final int MAX_TOTAL_DIGITS = 16;

    private RefundSeeder() {
    }

    /** The article's refund ids: {@code r_001} ... {@code r_815} ... {@code r_1200}. */
    public static String refundId(int index) {
        return refundId("r_", index);
    }

    /** Refund ids with another prefix, for seeding several merchants into one table. */
    public static String refundId(String prefix, int index) {
        return prefix + String.format("%03d", index);
    }

    /** {@link #amounts(int, BigDecimal, String)} in a currency with two decimals, EUR. */
    public static List<BigDecimal> amounts(int count, BigDecimal total) {
        return amounts(count, total, "EUR");
    }

    /**
     * Splits {@code total} into {@code count} positive amounts in {@code currency}'s minor units
     * that sum to it exactly.
     *
     * @throws IllegalArgumentException for a non-positive count; a currency that is not ISO 4217,
     *     has no minor units or more than three ({@link MinorUnits#digits}); a total that is not
     *     positive, has more decimals than the currency, is below one minor unit per refund, or
     *     splits into refunds above the amount column's limit
     */
    public static List<BigDecimal> amounts(int count, BigDecimal total, String currency) {
        if (count <= 0) {
            throw new IllegalArgumentException("refund count must be positive, got " + count);
        }
        if (count > 1_000_000) {
            throw new IllegalArgumentException("refund count " + count + " is over the limit of 1,000,000");
        }
        int digits = MinorUnits.digits(currency);
        if (total == null || total.signum() <= 0) {
            throw new IllegalArgumentException("total must be positive, got " + (total == null ? null : total.toPlainString()));
        }
        // Checked before any arithmetic: 1e999999999 parses, and its plain form has a billion digits.
        if (total.precision() - total.scale() > MAX_TOTAL_DIGITS) {
            throw new IllegalArgumentException("total is over the limit of " + MAX_TOTAL_DIGITS + " digits before the decimal point");
        }
        if (total.stripTrailingZeros().scale() > digits) {
            throw new IllegalArgumentException("total " + total.toPlainString() + " " + currency + (digits == 0
                    ? " has decimals, and " + currency + " has none" : " has more than " + DIGITS[digits] + " decimals, the most "
                    + currency + " has") + ": refused, never rounded");
        }
        BigDecimal oneUnit = BigDecimal.ONE.movePointLeft(digits);
        long maxUnits = BigDecimal.TEN.pow(MinorUnits.MAX_INTEGER_DIGITS + digits).longValueExact() - 1;
        BigDecimal maxAmount = BigDecimal.valueOf(maxUnits, digits);
        long units;
        try {
            units = total.movePointRight(digits).longValueExact();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("total " + total.toPlainString() + " split into " + count
                    + " refunds gives refunds above the amount column's limit of " + maxAmount.toPlainString());
        }
        if (units < count) {
            throw new IllegalArgumentException("total " + total.toPlainString() + " is too small to split into " + count
                    + " refunds of at least " + oneUnit.toPlainString());
        }
        long share = units / count;
        long remainder = units % count;
        long[] amounts = new long[count];
        for (int i = 0; i < count; i++) {
            amounts[i] = share + (i >= count - remainder ? 1 : 0);
        }
        // Move units within pairs (1,2), (3,4), (6,7), (8,9), ... of 1-based indexes; multiples of 5 keep the share.
        long maxOffset = share / 2;
        int first = -1;
        for (int index = 1; index <= count; index++) {
            if (index % 5 == 0) {
                continue;
            }
            if (first < 0) {
                first = index;
                continue;
            }
            long offset = maxOffset == 0 ? 0 : Math.floorMod(mix(first), maxOffset + 1);
            amounts[first - 1] += offset;
            amounts[index - 1] -= offset;
            first = -1;
        }
        List<BigDecimal> out = new ArrayList<>(count);
        for (long amount : amounts) {
            if (amount > maxUnits) {
                throw new IllegalArgumentException("total " + total.toPlainString() + " split into " + count
                        + " refunds gives refunds above the amount column's limit of " + maxAmount.toPlainString());
            }
            out.add(BigDecimal.valueOf(amount, digits));
        }
        return out;
    }

    private static final String[] DIGITS = {"no", "one", "two", "three"};

    private static long mix(long x) {
        x = (x ^ (x >>> 33)) * 0xff51afd7ed558ccdL;
        x = (x ^ (x >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return x ^ (x >>> 33);
    }

    /** {@link #seed(DataSource, String, String, int, BigDecimal, String)} with the article's ids {@code r_001}... */
    public static int seed(DataSource dataSource, String merchant, int count, BigDecimal total, String currency) {
        return seed(dataSource, merchant, "r_", count, total, currency);
    }

    /**
     * Inserts the merchant's refunds in one transaction: all or nothing. Refund ids are unique
     * across merchants, so a second merchant in the same table needs its own {@code idPrefix}.
     *
     * @throws IllegalStateException when the merchant already has refunds or an id is taken
     */
    public static int seed(DataSource dataSource, String merchant, String idPrefix, int count, BigDecimal total, String currency) {
        return seed(dataSource, merchant, idPrefix, count, total, currency, inserted -> { });
    }

    /**
     * {@link #seed(DataSource, String, String, int, BigDecimal, String)}, telling {@code inserted}
     * how many rows each batch sent (they are committed together at the end, or not at all).
     */
    public static int seed(DataSource dataSource, String merchant, String idPrefix, int count, BigDecimal total, String currency,
                           IntConsumer inserted) {
        Merchants.requireValid(merchant);
        if (idPrefix == null || !idPrefix.matches("[A-Za-z0-9_-]{1,40}")) {
            throw new IllegalArgumentException("refund id prefix must be 1 to 40 letters, digits, underscores or hyphens, got " + idPrefix);
        }
        if (currency == null || !currency.matches("[A-Z]{3}")) {
            throw new IllegalArgumentException("currency must be three capital letters, got " + currency);
        }
        List<BigDecimal> amounts = amounts(count, total, currency);
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(false);
            try {
                requireUnseeded(connection, merchant, idPrefix);
                insert(connection, merchant, idPrefix, amounts, currency, inserted);
                connection.commit();
                return count;
            } catch (SQLException | RuntimeException e) {
                connection.rollback();
                if (e instanceof SQLException sql && isUniqueViolation(sql)) {
                    // The checks above passed, then a concurrent seed or another merchant took the ids:
                    // the unique indexes on (merchant, seq) and id decide, and this seed wrote nothing.
                    requireUnseeded(connection, merchant, idPrefix);
                    throw new IllegalStateException("refund ids " + refundId(idPrefix, 1) + " to " + refundId(idPrefix, count)
                            + " collide with refunds already stored; seed with another id prefix");
                }
                throw e;
            } finally {
                connection.setAutoCommit(autoCommit); // the pool's connection goes back as it came
            }
        } catch (SQLException e) {
            throw new StoreUnavailableException("seeding refunds for " + merchant + " failed: " + e.getMessage(), e);
        }
    }

    /** Refuses a merchant that already has refunds, or a prefix whose first id another merchant holds. */
    private static void requireUnseeded(Connection connection, String merchant, String idPrefix) throws SQLException {
        try (PreparedStatement existing = connection.prepareStatement("SELECT COUNT(*) FROM refund WHERE merchant = ?")) {
            existing.setString(1, merchant);
            try (ResultSet rs = existing.executeQuery()) {
                rs.next();
                if (rs.getLong(1) > 0) {
                    throw new IllegalStateException("merchant " + merchant + " already has " + rs.getLong(1) + " refunds");
                }
            }
        }
        try (PreparedStatement taken = connection.prepareStatement("SELECT merchant FROM refund WHERE id = ?")) {
            taken.setString(1, refundId(idPrefix, 1));
            try (ResultSet rs = taken.executeQuery()) {
                if (rs.next()) {
                    throw new IllegalStateException("refund id " + refundId(idPrefix, 1) + " is already used by merchant "
                            + rs.getString(1) + "; seed with another id prefix");
                }
            }
        }
    }

    /** Inserts the rows, each with an idempotency key of its own (a random UUID: unique across deployments). */
    private static void insert(Connection connection, String merchant, String idPrefix, List<BigDecimal> amounts, String currency,
                               IntConsumer inserted) throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO refund (id, merchant, seq, amount, currency, idempotency_key) VALUES (?, ?, ?, ?, ?, ?)")) {
            for (int i = 0; i < amounts.size(); i++) {
                insert.setString(1, refundId(idPrefix, i + 1));
                insert.setString(2, merchant);
                insert.setInt(3, i + 1);
                insert.setBigDecimal(4, amounts.get(i));
                insert.setString(5, currency);
                insert.setString(6, UUID.randomUUID().toString());
                insert.addBatch();
                if (i % BATCH == BATCH - 1) {
                    insert.executeBatch();
                    inserted.accept(BATCH);
                }
            }
            insert.executeBatch();
            inserted.accept(amounts.size() % BATCH);
        }
    }

    /** SQLSTATE 23505 on PostgreSQL, 23000 with error 1062 on MariaDB; a batch wraps it one level down. */
    private static boolean isUniqueViolation(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && ("23505".equals(sql.getSQLState())
                    || ("23000".equals(sql.getSQLState()) && sql.getErrorCode() == 1062))) {
                return true;
            }
        }
        SQLException next = e.getNextException();
        return next != null && next != e && isUniqueViolation(next);
    }
}
