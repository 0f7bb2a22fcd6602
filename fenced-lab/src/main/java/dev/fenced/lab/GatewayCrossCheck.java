package dev.fenced.lab;

import dev.fenced.gateway.GatewayClient;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.settlement.Reconciliation;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The money half of the chaos checker: every refund row, of every deployment, against the
 * gateway's ledger by idempotency key (merchant, amount, currency and gateway id must all agree),
 * and the same question asked the operator's way, through {@link Reconciliation}.
 */
final class GatewayCrossCheck {
    record Row(String merchant, String id, BigDecimal amount, String currency, String key, String state, long fence,
               String gatewayReference) {
        String refundKey() {
            return merchant + "/" + id;
        }

        /** Confirmed sent: the provider took it, and may have given its final word since. */
        boolean confirmed() {
            return CONFIRMED.contains(state);
        }
    }

    private static final java.util.Set<String> CONFIRMED = java.util.Set.of("sent", "settled", "returned");

    private GatewayCrossCheck() {
    }

    static List<Row> rows(DataSource db) throws SQLException {
        List<Row> rows = new ArrayList<>();
        try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT merchant, id, amount, currency, idempotency_key, state, fence, gateway_reference FROM refund")) {
            while (rs.next()) {
                rows.add(new Row(rs.getString(1), rs.getString(2), rs.getBigDecimal(3), rs.getString(4), rs.getString(5), rs.getString(6),
                        rs.getLong(7), rs.getString(8)));
            }
        }
        return rows;
    }

    /** Each check's name and how many refunds break it. */
    static Map<String, Long> check(List<Row> rows, List<GatewayRefund> ledger) {
        Map<String, Row> byKey = rows.stream().collect(Collectors.toMap(Row::key, Function.identity()));
        Map<String, List<GatewayRefund>> refundsByKey = ledger.stream().collect(Collectors.groupingBy(GatewayRefund::idempotencyKey));
        long duplicates = ledger.stream().collect(Collectors.groupingBy(r -> r.merchant() + "/" + r.reference(), Collectors.counting()))
                .values().stream().mapToLong(n -> n - 1).sum();
        long strays = ledger.stream().filter(r -> !matches(byKey.get(r.idempotencyKey()), r)).count();
        long missing = rows.stream().filter(row -> !refundsByKey.containsKey(row.key())).count();
        long sentWrong = rows.stream().filter(Row::confirmed).filter(row -> {
            List<GatewayRefund> paid = refundsByKey.getOrDefault(row.key(), List.of());
            return paid.isEmpty() || !matches(row, paid.get(0)) || !paid.get(0).id().equals(row.gatewayReference());
        }).count();
        Map<String, Long> checks = new LinkedHashMap<>();
        checks.put("refunds created more than once at the gateway", duplicates);
        checks.put("gateway refunds matching no row (key, merchant, amount, currency)", strays);
        checks.put("refunds never created at the gateway", missing);
        checks.put("sent rows whose gateway refund differs (key, merchant, amount, currency, id)", sentWrong);
        checks.put("refunds marked failed that no injected refusal explains", rows.stream().filter(r -> r.state().equals("failed")).count());
        checks.put("refunds not sent after the drain", rows.stream().filter(r -> !r.confirmed()).count());
        return checks;
    }

    /**
     * With the provider's news on: every confirmed row ends with the provider's final word on its
     * refund, settled for succeeded and returned for failed or canceled, by webhook or by poll; none
     * left sent, none moved to the wrong one (a row moved back, or forward on news that was not its
     * refund's, would show here).
     */
    static Map<String, Long> finalWord(List<Row> rows, List<GatewayRefund> ledger) {
        Map<String, GatewayRefund> byId = ledger.stream().collect(Collectors.toMap(GatewayRefund::id, Function.identity(), (a, b) -> a));
        long withoutWord = rows.stream().filter(r -> r.state().equals("sent")).count();
        long wrongWord = rows.stream().filter(r -> r.state().equals("settled") || r.state().equals("returned")).filter(r -> {
            GatewayRefund refund = byId.get(r.gatewayReference());
            String expected = refund == null ? null : GatewayRefund.SUCCEEDED.equals(refund.status()) ? "settled"
                    : refund.finalStatus() ? "returned" : null;
            return !r.state().equals(expected);
        }).count();
        Map<String, Long> checks = new LinkedHashMap<>();
        checks.put("sent rows without the provider's final word after webhooks and the poll", withoutWord);
        checks.put("rows settled or returned against the provider's word", wrongWord);
        return checks;
    }

    /** The discrepancies {@code fenced reconcile} reports for the merchants, summed. */
    static long reconcile(DataSource db, String gatewayUrl, Collection<String> merchants) {
        try (GatewayClient gateway = GatewayClient.of(gatewayUrl, Duration.ofSeconds(10))) {
            Reconciliation reconciliation = Reconciliation.of(db, gateway);
            // A returned refund is the provider's word, reported for an operator; finalWord() checks it against the ledger.
            return merchants.stream().mapToLong(merchant -> reconciliation.check(merchant).discrepancies().stream()
                    .filter(d -> d.kind() != Reconciliation.Kind.RETURNED).count()).sum();
        }
    }

    private static boolean matches(Row row, GatewayRefund refund) {
        return row != null && Objects.equals(row.key(), refund.idempotencyKey()) && row.merchant().equals(refund.merchant())
                && row.amount().compareTo(refund.amount()) == 0 && row.currency().equals(refund.currency());
    }
}
