package dev.fenced.stripe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundLifecycle;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.SettlementOutcome;
import dev.fenced.settlement.SettlementWorker;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The settlement worker paying through Stripe's official library: a merchant's 40 refunds
 * (2,810.00 EUR) against one captured charge, with 30 % of the refund requests answered 500 after Stripe
 * made the refund; Stripe answers every retry under that key with the same 500, so the worker
 * finds those refunds among their charges' refunds by the key in metadata. Each refund is made
 * once, and the provider's final word then settles every row. Control: a Stripe that ignores keys makes a
 * second refund for retried rows (the charge captured twice the total, so the limit does not hide it).
 */
class StripeSettlementTest {

    @ParameterizedTest(name = "the provider ignores keys: {0}")
    @ValueSource(booleans = {false, true})
    void eachRefundIsMadeOnceThroughTheOfficialLibraryWhenAnswersAreLost(boolean control) throws Exception {
        DataSource db = TestDatabases.postgres();
        RefundSchema.migrate(db);
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(db, merchant, merchant + "_r", 40, new BigDecimal("2810.00"), "EUR");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).apiKey(StripeRefundGatewayTest.API_KEY)
                .failAfter(0.3).seed(4471).idempotency(!control).build());
             RedisLeaseStore leases = RedisLeaseStore.builder(TestRedis.uri())
                     .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf))).build()) {
            // A charge of its own for every row, capturing twice its amount: the limit must not hide a second refund.
            Map<String, String> charges = new java.util.HashMap<>();
            for (Map.Entry<String, BigDecimal> row : amounts(db, merchant).entrySet()) {
                charges.put(row.getKey(), StripeRefundGatewayTest.charge(gateway, merchant, row.getValue().multiply(BigDecimal.valueOf(2)).toPlainString()));
            }
            StripeRefundGateway stripe = StripeRefundGatewayTest.adapter(gateway, (m, reference) -> {
                if (!m.equals(merchant) || !charges.containsKey(reference)) {
                    throw new IllegalStateException("no charge for " + m + "/" + reference);
                }
                return charges.get(reference);
            });
            SettlementOutcome outcome = SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(stripe)
                    .ttl(Duration.ofSeconds(10)).gatewayBackoff(Duration.ofMillis(10)).gatewayAttempts(5).build().settle(merchant);
            List<GatewayRefund> made = gateway.ledger().stream().filter(r -> merchant.equals(r.merchant())).toList();
            Map<String, Long> perRow = made.stream().collect(Collectors.groupingBy(GatewayRefund::reference, Collectors.counting()));
            if (control) {
                assertThat(made.size()).as("control: retried rows refunded twice").isGreaterThan(40);
                return;
            }
            assertThat(outcome.result()).isEqualTo(SettlementOutcome.Result.COMPLETED);
            assertThat(outcome.sent()).isEqualTo(40);
            assertThat(perRow).hasSize(40).allSatisfy((row, count) -> assertThat(count).as(row).isEqualTo(1));
            assertThat(made).allSatisfy(refund -> assertThat(refund.metadata()).containsEntry("stripe_charge", charges.get(refund.reference())));
            assertThat(made.stream().map(GatewayRefund::amount).reduce(BigDecimal.ZERO, BigDecimal::add)).isEqualByComparingTo("2810.00");

            RefundLifecycle.Report word = RefundLifecycle.of(db, stripe).poll(merchant, Duration.ZERO);
            assertThat(word.settled()).as("the provider's final word, read by refund id through the library").hasSize(40);
            Map<String, GatewayRefund> byReference = made.stream().collect(Collectors.toMap(GatewayRefund::reference, Function.identity()));
            assertThat(stripe.findByReference(merchant, merchant + "_r001")).extracting(GatewayRefund::id)
                    .containsExactly(byReference.get(merchant + "_r001").id());
        }
    }

    private static Map<String, BigDecimal> amounts(DataSource db, String merchant) throws Exception {
        Map<String, BigDecimal> out = new java.util.TreeMap<>();
        try (java.sql.Connection c = db.getConnection();
             java.sql.PreparedStatement s = c.prepareStatement("SELECT id, amount FROM refund WHERE merchant = ?")) {
            s.setString(1, merchant);
            try (java.sql.ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getBigDecimal(2));
                }
            }
        }
        return out;
    }
}
