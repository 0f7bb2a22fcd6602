package dev.fenced.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.WebhookEvent;
import dev.fenced.provider.WebhookSignature;
import dev.fenced.testing.SettableClock;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The simulated gateway's signed deliveries over real HTTP; the signature itself is {@code dev.fenced.provider.WebhookTest}'s. */
class WebhookTest {
    private static final String NEW_SECRET = "whsec_new_9876543210";
    private static final BigDecimal AMOUNT = new BigDecimal("70.25");

    @Test
    void aWebhookUrlNeedsHttpNoUserInfoAndASecret() {
        assertThatThrownBy(() -> GatewayConfig.builder().webhooks(URI.create("http://u:p@127.0.0.1:1/"), NEW_SECRET).build())
                .hasMessageContaining("no user-info");
        assertThatThrownBy(() -> GatewayConfig.builder().webhooks(URI.create("ftp://127.0.0.1/"), NEW_SECRET).build())
                .hasMessageContaining("http or https");
        assertThatThrownBy(() -> GatewayConfig.builder().webhooks(URI.create("http://127.0.0.1:1/"), null).build())
                .hasMessageContaining("webhook-url needs a webhook-secret");
    }

    /** A receiver on real HTTP that records each delivery, answering what {@code answer} says. */
    private record Receiver(HttpServer server, List<Map.Entry<String, byte[]>> deliveries) implements AutoCloseable {
        static Receiver start(Function<Integer, Integer> answer) throws IOException {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
            List<Map.Entry<String, byte[]>> deliveries = new CopyOnWriteArrayList<>();
            AtomicInteger count = new AtomicInteger();
            server.createContext("/webhooks", exchange -> {
                byte[] body = exchange.getRequestBody().readAllBytes();
                int status = answer.apply(count.incrementAndGet());
                if (status == 200) {
                    deliveries.add(Map.entry(exchange.getRequestHeaders().getFirst(WebhookSignature.HEADER), body));
                }
                exchange.sendResponseHeaders(status, -1);
                exchange.close();
            });
            server.start();
            return new Receiver(server, deliveries);
        }

        URI url() {
            return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/webhooks");
        }

        List<WebhookEvent> events() {
            return deliveries.stream().map(d -> WebhookEvent.parse(d.getValue())).toList();
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    /**
     * The gateway sends each refund's {@code refund.created} when it is made and its final event
     * when it settles (the clock moved, not waited for), signed so that the receiver's check holds,
     * and retries a delivery the receiver refused. The final events tell what the ledger tells.
     */
    @Test
    void theGatewaySendsSignedEventsForEachRefundAndRetriesARefusedDelivery() throws Exception {
        SettableClock clock = new SettableClock();
        try (Receiver receiver = Receiver.start(n -> n <= 2 ? 503 : 200);
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).clock(clock).seed(3)
                     .lifecycle(Duration.ofHours(1), 0.5).webhooks(receiver.url(), NEW_SECRET).build())) {
            GatewayClient client = GatewayClient.of(gateway.url(), Duration.ofSeconds(5));
            for (int i = 1; i <= 10; i++) {
                client.createRefund("k_" + i, "r_" + i, "m_1", AMOUNT, "EUR");
            }
            // Deliveries run on the gateway's own thread: wait until the ten created events have arrived.
            await().atMost(Duration.ofSeconds(20)).until(() -> gateway.webhookStats().delivered() == 10);
            assertThat(receiver.events()).extracting(WebhookEvent::type).containsOnly(WebhookEvent.REFUND_CREATED);
            assertThat(receiver.events()).extracting(e -> e.refund().status()).containsOnly(GatewayRefund.PENDING);
            WebhookSignature check = WebhookSignature.of(List.of(NEW_SECRET), Duration.ofMinutes(5), clock);
            receiver.deliveries().forEach(d -> check.verify(d.getKey(), d.getValue()));
            clock.advance(Duration.ofHours(1));
            await().atMost(Duration.ofSeconds(20)).until(() -> gateway.webhookStats().delivered() == 20);
            receiver.deliveries().stream().skip(10).forEach(d -> check.verify(d.getKey(), d.getValue()));
            Map<String, String> finalStatus = receiver.events().stream().skip(10)
                    .collect(Collectors.toMap(e -> e.refund().id(), e -> e.refund().status()));
            assertThat(finalStatus).isEqualTo(gateway.ledger().stream().collect(Collectors.toMap(GatewayRefund::id, GatewayRefund::status)));
            assertThat(finalStatus).containsValues(GatewayRefund.SUCCEEDED, GatewayRefund.FAILED);
            assertThat(receiver.events().stream().skip(10)).allSatisfy(e -> assertThat(e.type())
                    .isEqualTo(e.refund().status().equals(GatewayRefund.FAILED) ? WebhookEvent.REFUND_FAILED : WebhookEvent.REFUND_UPDATED));
            assertThat(gateway.webhookStats().refusedDeliveries()).isEqualTo(2);
            assertThat(gateway.webhookStats().delivered()).isEqualTo(20);
        }
    }

    /**
     * Delivery faults, as a provider's deliveries go wrong: some events never arrive, some twice,
     * some after later events. Control: without faults every event arrives once and in order.
     */
    @Test
    void deliveriesAreLostDuplicatedAndReorderedAsConfigured() throws Exception {
        SettableClock clock = new SettableClock();
        int refunds = 40;
        try (Receiver receiver = Receiver.start(n -> 200);
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).clock(clock).seed(5)
                     .lifecycle(Duration.ofHours(1), 0).webhooks(receiver.url(), NEW_SECRET).webhookFaults(0.2, 0.2, 0.2).build())) {
            GatewayClient client = GatewayClient.of(gateway.url(), Duration.ofSeconds(5));
            for (int i = 1; i <= refunds; i++) {
                client.createRefund("k_" + i, "r_" + i, "m_1", AMOUNT, "EUR");
            }
            clock.advance(Duration.ofHours(1));
            // Held-back and duplicated deliveries go out on the sender's next ticks: wait until nothing waits.
            await().atMost(Duration.ofSeconds(20)).until(() -> gateway.webhookStats().waiting() == 0);
            WebhookStats stats = gateway.webhookStats();
            List<String> ids = receiver.events().stream().map(WebhookEvent::id).toList();
            Set<String> distinct = new LinkedHashSet<>(ids);
            assertThat(stats.lost()).isPositive();
            assertThat(stats.duplicated()).isPositive();
            assertThat(stats.reordered()).isPositive();
            assertThat(distinct).hasSize(2 * refunds - (int) stats.lost());
            assertThat(ids).hasSize(distinct.size() + (int) stats.duplicated());
            assertThat(overtaken(receiver.events())).as("events delivered after a later one").isPositive();
        }
        try (Receiver receiver = Receiver.start(n -> 200);
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).clock(clock).seed(5)
                     .lifecycle(Duration.ofHours(1), 0).webhooks(receiver.url(), NEW_SECRET).build())) {
            GatewayClient client = GatewayClient.of(gateway.url(), Duration.ofSeconds(5));
            for (int i = 1; i <= refunds; i++) {
                client.createRefund("k_" + i, "r_" + i, "m_1", AMOUNT, "EUR");
            }
            clock.advance(Duration.ofHours(1));
            await().atMost(Duration.ofSeconds(20)).until(() -> gateway.webhookStats().delivered() == 2 * refunds);
            assertThat(new LinkedHashSet<>(receiver.events().stream().map(WebhookEvent::id).toList())).as("control").hasSize(2 * refunds);
            assertThat(overtaken(receiver.events())).as("control").isZero();
        }
    }

    /** Deliveries of an event due before one delivered earlier: due by its time, then by its id (ids grow as events are made). */
    private static long overtaken(List<WebhookEvent> events) {
        java.util.Comparator<WebhookEvent> due = java.util.Comparator.comparingLong(WebhookEvent::created)
                .thenComparingLong(e -> Long.parseLong(e.id().substring(e.id().lastIndexOf('_') + 1)));
        WebhookEvent latest = null;
        long overtaken = 0;
        Set<String> seen = new java.util.HashSet<>();
        for (WebhookEvent event : events) {
            if (seen.add(event.id()) && latest != null && due.compare(event, latest) < 0) {
                overtaken++;
            }
            latest = latest == null || due.compare(event, latest) > 0 ? event : latest;
        }
        return overtaken;
    }
}
