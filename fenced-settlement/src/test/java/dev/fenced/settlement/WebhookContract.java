package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.WebhookEvent;
import dev.fenced.provider.WebhookSignature;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.SettlementOutcome.Result;
import dev.fenced.settlement.WebhookReceiver.Outcome;
import dev.fenced.testing.SettableClock;
import dev.fenced.testing.servers.TestRedis;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The provider's news by webhook, against a real database and the simulated gateway's signed
 * deliveries over real HTTP: rows move forward only, each event counts once, nothing is written
 * for a bad signature. One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class WebhookContract {
    private static final String SECRET = "whsec_test_4471";
    private HikariDataSource db;
    private RedisLeaseStore leases;

    protected abstract String jdbcUrl();

    @BeforeAll
    void start() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setMaximumPoolSize(12);
        db = new HikariDataSource(config);
        RefundSchema.migrate(db);
        leases = RedisLeaseStore.builder(TestRedis.uri())
                .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf))).build();
    }

    @AfterAll
    void stop() {
        if (db != null) {
            leases.close();
            db.close();
        }
    }

    private String seed(int refunds) {
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(db, merchant, merchant + "_r", refunds, new BigDecimal(refunds * 10 + ".00"), "EUR");
        return merchant;
    }

    private void settle(String merchant, PaymentGateway gateway) {
        assertThat(SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(5)))
                .ttl(Duration.ofSeconds(10)).build().settle(merchant).result()).isEqualTo(Result.COMPLETED);
    }

    /** Settles {@code merchant} through a gateway of its own; the refunds it made, in order. */
    private List<GatewayRefund> settledRefunds(String merchant) {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            settle(merchant, gateway);
            return gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).toList();
        }
    }

    /** The receiver on real HTTP, as {@code fenced webhooks} serves it; counts each outcome. */
    private record Endpoint(HttpServer server, Map<Outcome, Integer> outcomes) implements AutoCloseable {
        static Endpoint serve(WebhookReceiver receiver) throws Exception {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
            Map<Outcome, Integer> outcomes = new ConcurrentHashMap<>();
            server.createContext("/webhooks", exchange -> {
                WebhookReceiver.Receipt receipt = receiver.receive(exchange.getRequestHeaders().getFirst(WebhookSignature.HEADER),
                        exchange.getRequestBody().readAllBytes());
                outcomes.merge(receipt.outcome(), 1, Integer::sum);
                exchange.sendResponseHeaders(receipt.status(), -1);
                exchange.close();
            });
            server.setExecutor(Executors.newFixedThreadPool(4, runnable -> {
                Thread thread = new Thread(runnable, "webhook-endpoint");
                thread.setDaemon(true);
                return thread;
            }));
            server.start();
            return new Endpoint(server, outcomes);
        }

        URI url() {
            return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/webhooks");
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    /**
     * 20 refunds settle through a gateway that reports them pending for two hours, then succeeded
     * or, a quarter of them, failed; its webhooks lose 30 % of the deliveries, duplicate and reorder 20 %
     * each. When they have all gone, every row with news is final as the provider says;
     * the rows whose news was lost are still {@code sent} (the control: nothing but the news moves
     * a row), and a poll finishes them. Every row ends as the gateway's ledger says, and each event
     * that arrived is remembered once.
     */
    @Test
    void webhooksLateTwiceAndOutOfOrderMoveEachRowOnceAndThePollFindsTheLostOnes() throws Exception {
        String merchant = seed(20);
        SettableClock clock = new SettableClock(Instant.now());
        WebhookReceiver receiver = WebhookReceiver.of(db, WebhookSignature.of(List.of(SECRET), WebhookSignature.DEFAULT_TOLERANCE, clock));
        try (Endpoint endpoint = Endpoint.serve(receiver);
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).clock(clock).seed(21)
                     .lifecycle(Duration.ofHours(2), 0.25).webhooks(endpoint.url(), SECRET).webhookFaults(0.3, 0.2, 0.2).build())) {
            settle(merchant, gateway);
            clock.advance(Duration.ofHours(2));
            // The gateway delivers on its own thread, retrying 409s for rows not yet confirmed: wait until it has nothing left.
            await().atMost(Duration.ofSeconds(40)).until(() -> gateway.webhookStats().waiting() == 0);
            assertThat(gateway.webhookStats().givenUp()).isZero();
            Map<String, String> expected = new TreeMap<>();
            gateway.ledger().stream().filter(r -> r.merchant().equals(merchant))
                    .forEach(r -> expected.put(r.reference(), r.status().equals(GatewayRefund.SUCCEEDED) ? "settled" : "returned"));
            assertThat(expected.values()).contains("settled", "returned");
            Map<String, String> byNews = states(merchant);
            long stillSent = byNews.values().stream().filter("sent"::equals).count();
            assertThat(stillSent).as("rows whose final event was lost (the gateway lost %d deliveries)", gateway.webhookStats().lost())
                    .isPositive();
            byNews.forEach((id, state) -> assertThat(state).as(id).isIn("sent", expected.get(id)));
            assertThat(endpoint.outcomes()).containsKeys(Outcome.SETTLED, Outcome.NO_CHANGE);
            assertThat(endpoint.outcomes().get(Outcome.DUPLICATE)).as("duplicated deliveries").isPositive();

            RefundLifecycle.Report poll = RefundLifecycle.of(db, GatewayClient.of(gateway.url(), Duration.ofSeconds(5))).poll(merchant, Duration.ZERO);
            assertThat(poll.settled().size() + poll.returned().size()).isEqualTo((int) stillSent);
            assertThat(states(merchant)).isEqualTo(expected);
            int answered = endpoint.outcomes().entrySet().stream().filter(e -> e.getKey().status() == 200)
                    .mapToInt(Map.Entry::getValue).sum();
            assertThat(remembered(merchant)).as("each event answered 200 remembered once, its duplicates not again")
                    .isEqualTo(answered - endpoint.outcomes().get(Outcome.DUPLICATE));
        }
    }

    /**
     * Deliveries one by one: a final event moves a sent row once; its duplicate, an older pending
     * event arriving after it and a contradicting one write nothing; a bad signature, a stale
     * timestamp, an unknown refund and another refund's event write nothing; an event for a row not
     * yet confirmed is answered 409 and applied when delivered again after the confirm. Control:
     * the same deliveries, applied as they come (last write wins, no memory of events), leave the
     * returned row settled: money reported moved that did not.
     */
    @Test
    void eachDeliveryMovesARowForwardOnlyOnceAndOnlyWhenSigned() throws Exception {
        String merchant = seed(4);
        SettableClock clock = new SettableClock(Instant.now());
        List<GatewayRefund> refunds = settledRefunds(merchant);
        WebhookReceiver receiver = WebhookReceiver.of(db, WebhookSignature.of(List.of("whsec_old", SECRET), Duration.ofMinutes(5), clock));
        GatewayRefund a = refunds.get(0);
        GatewayRefund b = refunds.get(1);
        GatewayRefund c = refunds.get(2);
        GatewayRefund d = refunds.get(3);
        String run = UUID.randomUUID().toString().substring(0, 6);
        WebhookEvent aFailed = new WebhookEvent("evt_" + run + "_1", WebhookEvent.REFUND_FAILED, 0, a.withStatus("failed", "expired_or_canceled_card"));
        WebhookEvent aCreated = new WebhookEvent("evt_" + run + "_0", WebhookEvent.REFUND_CREATED, 0, a.withStatus("pending", null));
        WebhookEvent aSucceeded = new WebhookEvent("evt_" + run + "_2", WebhookEvent.REFUND_UPDATED, 0, a.withStatus("succeeded", null));
        List<WebhookEvent> aStream = List.of(aFailed, aFailed, aCreated, aSucceeded);

        List<Outcome> aOutcomes = new ArrayList<>();
        for (WebhookEvent event : aStream) {
            aOutcomes.add(receiver.receive(signed(event, clock, SECRET), event.toJson()).outcome());
        }
        assertThat(aOutcomes).containsExactly(Outcome.RETURNED, Outcome.DUPLICATE, Outcome.NO_CHANGE, Outcome.NO_CHANGE);
        assertThat(state(a.reference())).isEqualTo("returned");
        assertThat(column(a.reference(), "failure_reason")).isEqualTo("the provider reports the refund failed: expired_or_canceled_card");

        WebhookEvent bSucceeded = new WebhookEvent("evt_" + run + "_3", WebhookEvent.REFUND_UPDATED, 0, b.withStatus("succeeded", null));
        assertThat(receiver.receive(signed(bSucceeded, clock, "whsec_wrong"), bSucceeded.toJson()).outcome()).isEqualTo(Outcome.REJECTED);
        String stale = WebhookSignature.header(clock.millis() / 1000 - 301, bSucceeded.toJson(), List.of(SECRET));
        WebhookReceiver.Receipt staleReceipt = receiver.receive(stale, bSucceeded.toJson());
        assertThat(staleReceipt.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(staleReceipt.status()).isEqualTo(400);
        assertThat(staleReceipt.message()).doesNotContain(SECRET, stale.substring(stale.indexOf("v1=") + 3));
        assertThat(state(b.reference())).as("nothing written for a bad signature").isEqualTo("sent");
        assertThat(receiver.receive(signed(bSucceeded, clock, "whsec_old"), bSucceeded.toJson()).outcome())
                .as("control: the same event, signed with a configured secret").isEqualTo(Outcome.SETTLED);

        WebhookEvent otherAmount = new WebhookEvent("evt_" + run + "_4", WebhookEvent.REFUND_UPDATED, 0,
                new GatewayRefund(c.id(), c.idempotencyKey(), c.reference(), merchant, c.amount().add(BigDecimal.ONE), "EUR", 0, Map.of(),
                        "succeeded", null));
        assertThat(receiver.receive(signed(otherAmount, clock, SECRET), otherAmount.toJson()).outcome()).isEqualTo(Outcome.MISMATCH);
        WebhookEvent unknown = new WebhookEvent("evt_" + run + "_5", WebhookEvent.REFUND_UPDATED, 0,
                new GatewayRefund("gw_x", "k", "r_nowhere_" + run, merchant, BigDecimal.TEN, "EUR", 0, Map.of(), "succeeded", null));
        assertThat(receiver.receive(signed(unknown, clock, SECRET), unknown.toJson()).outcome()).isEqualTo(Outcome.UNKNOWN_REFUND);
        assertThat(state(c.reference())).isEqualTo("sent");

        execute("UPDATE refund SET state = 'sending' WHERE id = ?", d.reference());
        WebhookEvent dSucceeded = new WebhookEvent("evt_" + run + "_6", WebhookEvent.REFUND_UPDATED, 0, d.withStatus("succeeded", null));
        WebhookReceiver.Receipt early = receiver.receive(signed(dSucceeded, clock, SECRET), dSucceeded.toJson());
        assertThat(early.outcome()).isEqualTo(Outcome.NOT_YET_SENT);
        assertThat(early.status()).isEqualTo(409);
        execute("UPDATE refund SET state = 'sent' WHERE id = ?", d.reference());
        assertThat(receiver.receive(signed(dSucceeded, clock, SECRET), dSucceeded.toJson()).outcome())
                .as("delivered again after the confirm: not remembered the first time").isEqualTo(Outcome.SETTLED);

        // Control: a receiver that applies each event's status as it comes.
        execute("UPDATE refund SET state = 'sent', failure_reason = NULL WHERE id = ?", a.reference());
        for (WebhookEvent event : aStream) {
            String naive = switch (event.refund().status()) {
                case "succeeded" -> "settled";
                case "pending" -> "sent";
                default -> "returned";
            };
            execute("UPDATE refund SET state = ? WHERE id = ?", naive, a.reference());
        }
        assertThat(state(a.reference())).as("control: last write wins").isEqualTo("settled");
    }

    /**
     * Stripe's card refunds can fail after they succeeded (the card was closed; the money goes back
     * to the merchant): a settled row takes a later {@code failed} and is returned with the reason,
     * whatever order the events come in, and never goes back to settled. Control: on a third row,
     * a pending event and a second success after the first leave it settled: only a failure moves
     * a settled row.
     */
    @Test
    void aRefundThatFailsAfterItSucceededReturnsItsSettledRow() throws Exception {
        String merchant = seed(3);
        SettableClock clock = new SettableClock(Instant.now());
        List<GatewayRefund> refunds = settledRefunds(merchant);
        WebhookReceiver receiver = WebhookReceiver.of(db, WebhookSignature.of(List.of(SECRET), Duration.ofMinutes(5), clock));
        String run = UUID.randomUUID().toString().substring(0, 6);
        GatewayRefund e = refunds.get(0);
        GatewayRefund f = refunds.get(1);
        GatewayRefund g = refunds.get(2);
        WebhookEvent eSucceeded = new WebhookEvent("evt_" + run + "_1", WebhookEvent.REFUND_UPDATED, 0, e.withStatus("succeeded", null));
        WebhookEvent eFailed = new WebhookEvent("evt_" + run + "_2", WebhookEvent.REFUND_FAILED, 0, e.withStatus("failed", "expired_or_canceled_card"));
        WebhookEvent eSucceededAgain = new WebhookEvent("evt_" + run + "_3", WebhookEvent.REFUND_UPDATED, 0, e.withStatus("succeeded", null));
        List<Outcome> eOutcomes = new ArrayList<>();
        for (WebhookEvent event : List.of(eSucceeded, eFailed, eSucceededAgain)) {
            eOutcomes.add(receiver.receive(signed(event, clock, SECRET), event.toJson()).outcome());
        }
        assertThat(eOutcomes).containsExactly(Outcome.SETTLED, Outcome.RETURNED, Outcome.NO_CHANGE);
        assertThat(state(e.reference())).isEqualTo("returned");
        assertThat(column(e.reference(), "failure_reason")).isEqualTo("the provider reports the refund failed: expired_or_canceled_card");

        WebhookEvent fFailed = new WebhookEvent("evt_" + run + "_4", WebhookEvent.REFUND_FAILED, 0, f.withStatus("failed", "lost_or_stolen_card"));
        WebhookEvent fSucceeded = new WebhookEvent("evt_" + run + "_5", WebhookEvent.REFUND_UPDATED, 0, f.withStatus("succeeded", null));
        assertThat(receiver.receive(signed(fFailed, clock, SECRET), fFailed.toJson()).outcome()).isEqualTo(Outcome.RETURNED);
        assertThat(receiver.receive(signed(fSucceeded, clock, SECRET), fSucceeded.toJson()).outcome())
                .as("the success delivered after the failure: a failed refund never succeeds").isEqualTo(Outcome.NO_CHANGE);
        assertThat(state(f.reference())).isEqualTo("returned");

        // Control: what moves a settled row is the failure, nothing else: a pending event or another success leave it.
        WebhookEvent gPending = new WebhookEvent("evt_" + run + "_6", WebhookEvent.REFUND_CREATED, 0, g.withStatus("pending", null));
        WebhookEvent gSucceeded = new WebhookEvent("evt_" + run + "_7", WebhookEvent.REFUND_UPDATED, 0, g.withStatus("succeeded", null));
        WebhookEvent gSucceededAgain = new WebhookEvent("evt_" + run + "_8", WebhookEvent.REFUND_UPDATED, 0, g.withStatus("succeeded", null));
        List<Outcome> gOutcomes = new ArrayList<>();
        for (WebhookEvent event : List.of(gSucceeded, gPending, gSucceededAgain)) {
            gOutcomes.add(receiver.receive(signed(event, clock, SECRET), event.toJson()).outcome());
        }
        assertThat(gOutcomes).containsExactly(Outcome.SETTLED, Outcome.NO_CHANGE, Outcome.NO_CHANGE);
        assertThat(state(g.reference())).isEqualTo("settled");
    }

    /**
     * Refunds the provider failed after accepting them (no money moved) are returned, and stay so
     * until an operator says: {@code repair} with {@code resendReturned} gives each a new key and puts
     * it back to pending, and the next settle pays each once, under the new key; reconcile then
     * agrees (the failed refunds under the old keys moved no money). Control: the same repair
     * without it leaves every row returned and sends nothing. A row returned here whose refund the
     * provider reports succeeded is a mismatch, never sent again.
     */
    @Test
    void returnedRefundsAreSentAgainUnderANewKeyOnlyWhenAnOperatorSaysSo() throws Exception {
        String merchant = seed(3);
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).lifecycle(Duration.ZERO, 1.0).build())) {
            settle(merchant, gateway);
            GatewayClient client = GatewayClient.of(gateway.url(), Duration.ofSeconds(5));
            assertThat(RefundLifecycle.of(db, client).poll(merchant, Duration.ZERO).returned()).hasSize(3);
            Map<String, String> firstKeys = byId(merchant, "idempotency_key");
            Reconciliation reconciliation = Reconciliation.of(db, client);
            assertThat(reconciliation.check(merchant).discrepancies()).extracting(Reconciliation.Discrepancy::kind)
                    .containsOnly(Reconciliation.Kind.RETURNED).hasSize(3);
            reconciliation.repair(merchant, leases, Duration.ofSeconds(10), new Reconciliation.Repairs(false, false, false));
            assertThat(states(merchant).values()).as("control: returned until an operator says").containsOnly("returned");
            Reconciliation.Report resent = reconciliation.repair(merchant, leases, Duration.ofSeconds(10),
                    new Reconciliation.Repairs(false, false, true));
            assertThat(resent.discrepancies()).hasSize(3).allSatisfy(d -> assertThat(d.repairedTo()).isEqualTo("pending"));
            assertThat(states(merchant).values()).containsOnly("pending");
            Map<String, String> newKeys = byId(merchant, "idempotency_key");
            newKeys.forEach((id, key) -> assertThat(key).as(id).isNotEqualTo(firstKeys.get(id)));
            assertThat(byId(merchant, "failure_reason").values()).containsOnly((String) null);

            settle(merchant, gateway);
            List<GatewayRefund> made = gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).toList();
            assertThat(made).hasSize(6);
            assertThat(made.stream().filter(r -> newKeys.containsValue(r.idempotencyKey()))).as("one new refund per row, under its new key")
                    .hasSize(3);
            assertThat(states(merchant).values()).containsOnly("sent");
            assertThat(reconciliation.check(merchant).discrepancies()).as("the failed refunds under the old keys moved no money").isEmpty();
        }
        // A row returned here whose refund the provider reports succeeded is never sent again: it would pay twice.
        String paid = seed(1);
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            settle(paid, gateway);
            execute("UPDATE refund SET state = 'returned' WHERE merchant = ?", paid);
            Reconciliation reconciliation = Reconciliation.of(db, GatewayClient.of(gateway.url(), Duration.ofSeconds(5)));
            assertThat(reconciliation.check(paid).discrepancies()).extracting(Reconciliation.Discrepancy::kind)
                    .containsExactly(Reconciliation.Kind.MISMATCH);
            reconciliation.repair(paid, leases, Duration.ofSeconds(10), new Reconciliation.Repairs(false, false, true));
            assertThat(states(paid).values()).containsOnly("returned");
            assertThat(gateway.ledger()).hasSize(1);
        }
    }

    /** Eight deliveries of one event at once: one moves the row, seven are duplicates. */
    @Test
    void concurrentDeliveriesOfOneEventMoveTheRowOnce() throws Exception {
        String merchant = seed(1);
        GatewayRefund refund;
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            settle(merchant, gateway);
            refund = gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).findFirst().orElseThrow();
        }
        SettableClock clock = new SettableClock(Instant.now());
        WebhookReceiver receiver = WebhookReceiver.of(db, WebhookSignature.of(List.of(SECRET), Duration.ofMinutes(5), clock));
        WebhookEvent event = new WebhookEvent("evt_" + UUID.randomUUID(), WebhookEvent.REFUND_UPDATED, 0, refund.withStatus("succeeded", null));
        String header = signed(event, clock, SECRET);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            CyclicBarrier together = new CyclicBarrier(8);
            List<Future<Outcome>> outcomes = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                outcomes.add(pool.submit(() -> {
                    together.await();
                    return receiver.receive(header, event.toJson()).outcome();
                }));
            }
            Map<Outcome, Integer> counts = new EnumMap<>(Outcome.class);
            for (Future<Outcome> outcome : outcomes) {
                counts.merge(outcome.get(), 1, Integer::sum);
            }
            assertThat(counts).containsExactlyInAnyOrderEntriesOf(Map.of(Outcome.SETTLED, 1, Outcome.DUPLICATE, 7));
        } finally {
            pool.shutdownNow();
        }
        assertThat(state(refund.reference())).isEqualTo("settled");
    }

    private static String signed(WebhookEvent event, SettableClock clock, String secret) {
        return WebhookSignature.header(clock.millis() / 1000, event.toJson(), List.of(secret));
    }

    private Map<String, String> states(String merchant) throws SQLException {
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

    private Map<String, String> byId(String merchant, String column) throws SQLException {
        Map<String, String> values = new TreeMap<>();
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("SELECT id, " + column + " FROM refund WHERE merchant = ?")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    values.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return values;
    }

    private String state(String id) throws SQLException {
        return column(id, "state");
    }

    private String column(String id, String column) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("SELECT " + column + " FROM refund WHERE id = ?")) {
            s.setString(1, id);
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private int remembered(String merchant) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement(
                "SELECT COUNT(*) FROM provider_event WHERE refund_id LIKE ?")) {
            s.setString(1, merchant + "_r%");
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    private void execute(String sql, Object... values) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement(sql)) {
            for (int i = 0; i < values.length; i++) {
                s.setObject(i + 1, values[i]);
            }
            s.executeUpdate();
        }
    }
}
