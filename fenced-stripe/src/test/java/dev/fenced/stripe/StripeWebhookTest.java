package dev.fenced.stripe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import com.stripe.model.Event;
import com.stripe.model.Refund;
import com.stripe.net.Webhook;
import com.sun.net.httpserver.HttpServer;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.WebhookSignature;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.Reconciliation;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.SettlementOutcome;
import dev.fenced.settlement.SettlementWorker;
import dev.fenced.settlement.WebhookReceiver;
import dev.fenced.testing.SettableClock;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The provider's late word, Stripe-shaped: refunds made through the official library are pending
 * for an hour, then succeed or, a third of them, fail (the card expired); the gateway's webhooks
 * carry Stripe's event and refund objects, signed so that Stripe's own {@code Webhook.constructEvent}
 * accepts them, and a {@link WebhookReceiver} reading them with {@link StripeWebhookEvents} moves
 * each row to settled or returned exactly as the gateway says. Control: the pending events that
 * came first moved nothing.
 */
class StripeWebhookTest {
    private static final String SECRET = "whsec_stripe_test";

    @Test
    void aLateFailureReportedByStripesWebhookReturnsTheRow() throws Exception {
        DataSource db = TestDatabases.postgres();
        String merchant = seededMerchant(db, 6, "421.50");
        SettableClock clock = new SettableClock(Instant.now());
        WebhookReceiver receiver = stripeReceiver(db, clock);
        List<Map.Entry<String, String>> deliveries = new CopyOnWriteArrayList<>();
        HttpServer server = serve(receiver, deliveries);
        URI url = url(server);
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).apiKey(StripeRefundGatewayTest.API_KEY)
                .clock(clock).seed(11).lifecycle(Duration.ofHours(1), 0.34).webhooks(url, SECRET).build());
             RedisLeaseStore leases = RedisLeaseStore.builder(TestRedis.uri())
                     .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf))).build()) {
            String charge = StripeRefundGatewayTest.charge(gateway, merchant, "421.50");
            StripeRefundGateway stripe = StripeRefundGatewayTest.adapter(gateway, (m, reference) -> charge);
            assertThat(SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(stripe).ttl(Duration.ofSeconds(10)).build()
                    .settle(merchant).result()).isEqualTo(SettlementOutcome.Result.COMPLETED);
            // The gateway delivers on its own thread: wait for the six refund.created events.
            await().atMost(Duration.ofSeconds(20)).until(() -> gateway.webhookStats().delivered() == 6);
            Event first = Webhook.constructEvent(deliveries.get(0).getValue(), deliveries.get(0).getKey(), SECRET, 300, clock);
            assertThat(first.getType()).isEqualTo("refund.created");
            Refund pending = (Refund) first.getDataObjectDeserializer().deserializeUnsafe();
            assertThat(pending.getStatus()).isEqualTo("pending");
            assertThat(pending.getCharge()).isEqualTo(charge);
            assertThat(pending.getMetadata()).containsEntry(StripeRefundGateway.MERCHANT, merchant);
            assertThat(states(db, merchant).values()).as("control: pending news moves nothing").containsOnly("sent");

            clock.advance(Duration.ofHours(1));
            await().atMost(Duration.ofSeconds(20)).until(() -> gateway.webhookStats().delivered() == 12);
            Map<String, String> expected = new TreeMap<>();
            gateway.ledger().stream().filter(r -> merchant.equals(r.merchant())).forEach(r -> expected.put(r.reference(),
                    GatewayRefund.SUCCEEDED.equals(r.status()) ? "settled" : "returned"));
            assertThat(expected.values()).contains("settled", "returned");
            assertThat(states(db, merchant)).isEqualTo(expected);
            Event late = Webhook.constructEvent(deliveries.get(11).getValue(), deliveries.get(11).getKey(), SECRET, 300, clock);
            assertThat(late.getType()).isIn("refund.updated", "refund.failed");
        } finally {
            server.stop(0);
        }
    }

    /**
     * Stripe's card refunds can fail after they succeeded: a refund against a charge paid with
     * Stripe's {@code tok_refundFail} test card reports {@code succeeded}, then {@code failed}
     * ({@code expired_or_canceled_card}), and its amount is refundable again. Its row goes settled,
     * then returned with the reason, from Stripe's own events read through the official library.
     * Control: the row paid with {@code tok_visa}, on the same path, stays settled.
     */
    @Test
    void aRefundToAClosedCardFailsAfterItSucceededAndItsRowIsReturned() throws Exception {
        DataSource db = TestDatabases.postgres();
        String merchant = seededMerchant(db, 2, "140.50");
        SettableClock clock = new SettableClock(Instant.now());
        WebhookReceiver receiver = stripeReceiver(db, clock);
        HttpServer server = serve(receiver, new CopyOnWriteArrayList<>());
        URI url = url(server);
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).apiKey(StripeRefundGatewayTest.API_KEY)
                .clock(clock).lifecycle(Duration.ofHours(1), 0).webhooks(url, SECRET).build());
             RedisLeaseStore leases = RedisLeaseStore.builder(TestRedis.uri())
                     .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf))).build()) {
            String good = StripeRefundGatewayTest.charge(gateway, merchant, "200.00", "tok_visa");
            String closed = StripeRefundGatewayTest.charge(gateway, merchant, "200.00", "tok_refundFail");
            String visaRow = RefundSeeder.refundId(merchant + "_r", 1);
            String closedRow = RefundSeeder.refundId(merchant + "_r", 2);
            StripeRefundGateway stripe = StripeRefundGatewayTest.adapter(gateway, (m, reference) -> reference.equals(visaRow) ? good : closed);
            assertThat(SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(stripe).ttl(Duration.ofSeconds(10)).build()
                    .settle(merchant).result()).isEqualTo(SettlementOutcome.Result.COMPLETED);
            // The gateway delivers on its own thread: wait for each step's events to arrive.
            await().atMost(Duration.ofSeconds(20)).until(() -> gateway.webhookStats().delivered() == 2);
            clock.advance(Duration.ofHours(1));
            await().atMost(Duration.ofSeconds(20)).until(() -> gateway.webhookStats().delivered() == 4);
            assertThat(states(db, merchant)).containsEntry(visaRow, "settled").containsEntry(closedRow, "settled");
            GatewayRefund closedRefund = stripe.findByReference(merchant, closedRow).get(0);
            assertThat(closedRefund.status()).isEqualTo(GatewayRefund.SUCCEEDED);

            clock.advance(Duration.ofHours(1));
            await().atMost(Duration.ofSeconds(20)).until(() -> gateway.webhookStats().delivered() == 5);
            assertThat(states(db, merchant)).containsEntry(closedRow, "returned").containsEntry(visaRow, "settled");
            assertThat(stripe.refundById(merchant, closedRefund.id()).orElseThrow().failureReason()).isEqualTo("expired_or_canceled_card");
            try (Connection c = db.getConnection();
                 PreparedStatement s = c.prepareStatement("SELECT failure_reason FROM refund WHERE id = ?")) {
                s.setString(1, closedRow);
                try (ResultSet rs = s.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getString(1)).isEqualTo("the provider reports the refund failed: expired_or_canceled_card");
                }
            }
            // Had the failure's news been lost, the row would still say settled: reconcile says the money came back, and its
            // repair writes what the webhook would have.
            try (Connection c = db.getConnection();
                 PreparedStatement s = c.prepareStatement("UPDATE refund SET state = 'settled', failure_reason = NULL WHERE id = ?")) {
                s.setString(1, closedRow);
                s.executeUpdate();
            }
            assertThat(Reconciliation.of(db, stripe).check(merchant).discrepancies()).singleElement().satisfies(d -> {
                assertThat(d.kind()).isEqualTo(Reconciliation.Kind.FAILED_AFTER_SETTLED);
                assertThat(d.refundId()).isEqualTo(closedRow);
                assertThat(d.detail()).contains("settled here, but the gateway reports the refund failed (expired_or_canceled_card)");
            });
            Reconciliation.Report repaired = Reconciliation.of(db, stripe).repair(merchant, leases, Duration.ofSeconds(10),
                    new Reconciliation.Repairs(false, false, false));
            assertThat(repaired.discrepancies()).extracting(Reconciliation.Discrepancy::kind, Reconciliation.Discrepancy::repairedTo)
                    .containsExactly(tuple(Reconciliation.Kind.FAILED_AFTER_SETTLED, "returned"),
                            tuple(Reconciliation.Kind.RETURNED, null));
            assertThat(repaired.unresolved()).as("the customer still has no refund: a returned row, for --resend-returned")
                    .extracting(Reconciliation.Discrepancy::kind).containsExactly(Reconciliation.Kind.RETURNED);
            assertThat(states(db, merchant)).containsEntry(closedRow, "returned").containsEntry(visaRow, "settled");
            assertThat(stripe.createRefund("k_again_" + merchant, closedRow + "_again", merchant, new BigDecimal("200.00"), "EUR").amount())
                    .as("the failed refund gave the charge its amount back").isEqualByComparingTo("200.00");
        } finally {
            server.stop(0);
        }
    }

    /** A new merchant with {@code refunds} pending refunds of {@code total} EUR in all. */
    private static String seededMerchant(DataSource db, int refunds, String total) {
        RefundSchema.migrate(db);
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(db, merchant, merchant + "_r", refunds, new BigDecimal(total), "EUR");
        return merchant;
    }

    /** The receiver a Stripe team runs: {@link #SECRET}, 5 minutes' tolerance on {@code clock}, events read by Stripe's library. */
    private static WebhookReceiver stripeReceiver(DataSource db, SettableClock clock) {
        return WebhookReceiver.of(db, WebhookSignature.of(List.of(SECRET), Duration.ofMinutes(5), clock), StripeWebhookEvents::read);
    }

    /** {@code receiver} on real HTTP at {@code /webhooks}, each delivery's signature and body kept in {@code deliveries}. */
    private static HttpServer serve(WebhookReceiver receiver, List<Map.Entry<String, String>> deliveries) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        server.createContext("/webhooks", exchange -> {
            try (exchange) {
                byte[] body = exchange.getRequestBody().readAllBytes();
                String signature = exchange.getRequestHeaders().getFirst(WebhookSignature.HEADER);
                deliveries.add(Map.entry(signature, new String(body, StandardCharsets.UTF_8)));
                exchange.sendResponseHeaders(receiver.receive(signature, body).status(), -1);
            }
        });
        server.start();
        return server;
    }

    private static URI url(HttpServer server) {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/webhooks");
    }

    private static Map<String, String> states(DataSource db, String merchant) throws Exception {
        Map<String, String> states = new TreeMap<>();
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("SELECT id, state FROM refund WHERE merchant = ?")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    states.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return states;
    }
}
