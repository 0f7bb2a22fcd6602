package dev.fenced.settlement;

import dev.fenced.StoreUnavailableException;
import dev.fenced.provider.GatewayException;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.RefundGateway;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The provider's final word on refunds it accepted. A row in {@code sent} means the provider took
 * the refund; a provider settles it later ({@code succeeded}) or not at all ({@code failed},
 * {@code canceled}: the money did not move). {@link #poll} asks the provider about each
 * {@code sent} row without news for a while, by the refund's id, and moves it forward:
 * {@code settled}, or {@code returned} with the provider's reason. Nothing else: a
 * {@code pending} refund stays {@code sent}, a returned one waits for an operator (a new attempt
 * needs a new key), and no row ever moves back: {@code returned} is the last word, and
 * {@code settled} moves only to {@code returned}, when a card refund fails after it succeeded (Stripe
 * says {@code succeeded}, then {@code failed} when the card was closed; the money goes back to the
 * merchant). The poll asks about {@code sent} rows only: such a late failure of a {@code settled}
 * row reaches it by webhook ({@link WebhookReceiver}), or {@code reconcile} reports it.
 *
 * <p>These writes carry no fence, and need none: each records a fact the provider decided about a
 * refund already made, not a decision of whoever holds the merchant, and each is conditional on
 * the row's state (the move must be {@link FinalWord#follows forward}) and on the same gateway refund id. Two pollers, or a poller and a
 * late one, write the same fact once; a holder never writes a {@code sent} row (claims take
 * {@code pending} and {@code sending} rows only), so the two cannot undo each other. RELIABILITY.md,
 * "The provider's final word". Immutable and thread-safe.
 */
public final class RefundLifecycle {
    /**
     * What a poll found. {@code unanswered} rows got no answer: asked again next time. {@code missing}
     * rows have no refund under their gateway id, or one for another merchant, amount or currency:
     * left as they are, for {@code reconcile} to report.
     */
    public record Report(String merchant, int checked, List<String> settled, List<String> returned, int stillPending, int unanswered,
                         List<String> missing) {
        public Report {
            settled = List.copyOf(settled);
            returned = List.copyOf(returned);
            missing = List.copyOf(missing);
        }
    }

    /** A sent row as the poll reads it. */
    private record SentRow(String id, String gatewayRefundId, BigDecimal amount, String currency) {
        boolean matches(String merchant, GatewayRefund refund) {
            return refund.merchant().equals(merchant) && refund.amount().compareTo(amount) == 0 && refund.currency().equals(currency);
        }
    }

    private final DataSource dataSource;
    private final RefundGateway gateway;

    private RefundLifecycle(DataSource dataSource, RefundGateway gateway) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.gateway = Objects.requireNonNull(gateway, "gateway");
    }

    public static RefundLifecycle of(DataSource dataSource, RefundGateway gateway) {
        return new RefundLifecycle(dataSource, gateway);
    }

    /**
     * Asks the provider about each of the merchant's {@code sent} rows unchanged for at least
     * {@code quietFor} (by the database's clock), one call each, and writes the final ones.
     *
     * @throws GatewayException when the provider refuses the credentials: no later call would be let in
     * @throws StoreUnavailableException when the database cannot be read or written
     */
    public Report poll(String merchant, Duration quietFor) {
        Merchants.requireValid(merchant);
        if (quietFor == null || quietFor.isNegative()) {
            throw new IllegalArgumentException("quiet-for must not be negative, got " + quietFor);
        }
        List<String> settled = new ArrayList<>();
        List<String> returned = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        int pending = 0;
        int unanswered = 0;
        List<SentRow> rows = quietRows(merchant, quietFor);
        for (SentRow row : rows) {
            GatewayRefund refund;
            try {
                refund = gateway.refundById(merchant, row.gatewayRefundId()).orElse(null);
            } catch (GatewayException e) {
                if (e.credentialsRefused()) {
                    throw e;
                }
                unanswered++;
                continue;
            }
            if (refund == null || !row.matches(merchant, refund)) {
                missing.add(row.id()); // not this row's refund: reconcile reports it, the poll writes nothing
            } else if (refund.finalStatus()) {
                FinalWord word = FinalWord.of(refund);
                if (moveForward(row.id(), row.gatewayRefundId(), word)) {
                    (word.settled() ? settled : returned).add(row.id());
                }
            } else {
                pending++;
            }
        }
        return new Report(merchant, rows.size(), settled, returned, pending, unanswered, missing);
    }

    /**
     * {@link #poll} for every merchant with a {@code sent} row unchanged for at least
     * {@code quietFor}: the backstop for news that never came (a webhook lost, or never sent).
     * Returns one report per merchant polled, in merchant order.
     *
     * @throws GatewayException when the provider refuses the credentials
     * @throws StoreUnavailableException when the database cannot be read or written
     */
    public List<Report> pollQuiet(Duration quietFor) {
        if (quietFor == null || quietFor.isNegative()) {
            throw new IllegalArgumentException("quiet-for must not be negative, got " + quietFor);
        }
        List<String> merchants = new ArrayList<>();
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement("SELECT DISTINCT merchant FROM refund WHERE state = 'sent'"
                     + " AND gateway_reference IS NOT NULL AND " + RefundRow.ageMillis(connection, "updated_at") + " >= ? ORDER BY merchant")) {
            statement.setLong(1, quietFor.toMillis());
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    merchants.add(rs.getString(1));
                }
            }
        } catch (SQLException e) {
            throw new StoreUnavailableException("reading the merchants with sent refunds failed: " + e.getMessage(), e);
        }
        List<Report> reports = new ArrayList<>();
        for (String merchant : merchants) {
            if (Merchants.isValid(merchant)) { // a row written around this library with an id it refuses is reconcile's to report
                reports.add(poll(merchant, quietFor));
            }
        }
        return reports;
    }

    /** The merchant's sent rows unchanged for {@code quietFor}. */
    private List<SentRow> quietRows(String merchant, Duration quietFor) {
        List<SentRow> rows = new ArrayList<>();
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement("SELECT id, gateway_reference, amount, currency, "
                     + RefundRow.ageMillis(connection, "updated_at") + " FROM refund WHERE merchant = ? AND state = 'sent'"
                     + " AND gateway_reference IS NOT NULL ORDER BY seq")) {
            statement.setString(1, merchant);
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    // Zero takes every row: MariaDB reads its clock here in whole seconds, so a row just sent can look younger than zero.
                    if (quietFor.isZero() || rs.getDouble(5) >= quietFor.toMillis()) {
                        rows.add(new SentRow(rs.getString(1), rs.getString(2), rs.getBigDecimal(3), rs.getString(4)));
                    }
                }
            }
        } catch (SQLException e) {
            throw new StoreUnavailableException("reading the sent refunds of " + merchant + " failed: " + e.getMessage(), e);
        }
        return rows;
    }

    /** The state a provider's final status puts a sent row in, and the reason kept with it. */
    record FinalWord(String state, String reason) {
        /** Null for a refund whose status is not final. */
        static FinalWord of(GatewayRefund refund) {
            if (GatewayRefund.SUCCEEDED.equals(refund.status())) {
                return new FinalWord("settled", null);
            }
            if (!refund.finalStatus()) {
                return null;
            }
            return new FinalWord("returned", RefundWrites.boundedReason("the provider reports the refund " + refund.status()
                    + (refund.failureReason() == null ? "" : ": " + refund.failureReason())));
        }

        boolean settled() {
            return state.equals("settled");
        }

        /**
         * Whether a row in {@code rowState} takes this word: a sent row takes either; a settled row
         * takes returned, since a card refund can fail after it succeeded (Stripe reports
         * {@code succeeded}, then {@code failed} when the card was closed, and gives the money back
         * to the merchant); a returned row takes nothing, since a failed refund never succeeds.
         */
        boolean follows(String rowState) {
            return rowState.equals("sent") || (rowState.equals("settled") && !settled());
        }
    }

    /** The poll's write, in a statement of its own (auto-commit on, as the pool's connection had it put back after). */
    private boolean moveForward(String id, String gatewayRefundId, FinalWord word) {
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = RunWrites.autoCommitOn(connection);
            try {
                return moveForward(connection, id, gatewayRefundId, word);
            } finally {
                RunWrites.restore(connection, autoCommit);
            }
        } catch (SQLException e) {
            throw new StoreUnavailableException("recording the provider's word on " + id + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * The one write of the provider's final word, the poll's and the webhooks': only forward
     * ({@link FinalWord#follows}), and only for the refund the row was confirmed with. Returns
     * whether the row moved.
     */
    static boolean moveForward(Connection connection, String id, String gatewayRefundId, FinalWord word) throws SQLException {
        // The predicate is FinalWord.follows in SQL: sent moves to either word, settled only to returned.
        try (PreparedStatement update = connection.prepareStatement("UPDATE refund SET state = ?, failure_reason = ?"
                + " WHERE id = ? AND gateway_reference = ? AND (state = 'sent' OR (state = 'settled' AND ? = 'returned'))")) {
            update.setString(1, word.state());
            update.setString(2, word.reason());
            update.setString(3, id);
            update.setString(4, gatewayRefundId);
            update.setString(5, word.state());
            return update.executeUpdate() == 1;
        }
    }
}
