package dev.fenced.lab;

import com.sun.net.httpserver.HttpServer;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.provider.RefundGateway;
import dev.fenced.provider.WebhookEvent;
import dev.fenced.provider.WebhookSignature;
import dev.fenced.settlement.RefundLifecycle;
import dev.fenced.settlement.WebhookReceiver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * The lab's receiving end of the provider's news ({@link Fault#PROVIDER_NEWS}, {@code demo
 * --provider stripe}): {@code fenced webhooks}' receiver on the run's database, over real HTTP on
 * loopback, counting what each delivery did and handing each receipt to a listener; and the poll
 * that finds, after the drain, the news the gateway's faults lost.
 */
final class LabWebhooks implements AutoCloseable {
    /** The chaos run's gateway signs with it; the run's own, never a real secret. */
    static final String SECRET = "whsec_chaos_run";
    /** How long a refund stays pending at the gateway before its final word. */
    static final Duration SETTLE_AFTER = Duration.ofSeconds(1);
    /** The share of refunds that fail after acceptance. */
    static final double FAIL_LATE = 0.1;
    /** The share of deliveries lost, duplicated and reordered, each. */
    static final double DELIVERY_FAULTS = 0.2;

    private final HttpServer server;
    private final ExecutorService handlers = Executors.newFixedThreadPool(4, runnable -> {
        Thread thread = new Thread(runnable, "lab-webhooks");
        thread.setDaemon(true);
        return thread;
    });
    private final Map<WebhookReceiver.Outcome, Integer> outcomes = new ConcurrentHashMap<>();

    private LabWebhooks(DataSource db, String secret, WebhookReceiver.EventReader reader, Consumer<WebhookReceiver.Receipt> listener) {
        WebhookReceiver receiver = WebhookReceiver.of(db, WebhookSignature.of(List.of(secret)), reader);
        PaymentGateway.useTcpNoDelay(); // this server may be the process's first: the gateway started after it needs it too
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the lab's webhook receiver: " + e.getMessage(), e);
        }
        server.setExecutor(handlers);
        server.createContext("/webhooks", exchange -> {
            try (exchange) {
                WebhookReceiver.Receipt receipt = receiver.receive(exchange.getRequestHeaders().getFirst(WebhookSignature.HEADER),
                        exchange.getRequestBody().readNBytes(64 * 1024));
                outcomes.merge(receipt.outcome(), 1, Integer::sum);
                listener.accept(receipt);
                exchange.sendResponseHeaders(receipt.status(), -1);
            }
        });
        server.start();
    }

    /** The chaos run's: signed with {@link #SECRET}, the simulator's events. */
    static LabWebhooks start(DataSource db) {
        return start(db, SECRET, WebhookEvent::parse, receipt -> { });
    }

    static LabWebhooks start(DataSource db, String secret, WebhookReceiver.EventReader reader, Consumer<WebhookReceiver.Receipt> listener) {
        return new LabWebhooks(db, secret, reader, listener);
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/webhooks");
    }

    /** How many deliveries ended in each outcome. */
    Map<WebhookReceiver.Outcome, Integer> outcomes() {
        return Map.copyOf(outcomes);
    }

    /** The poll an operator's {@code fenced webhooks --gateway-url} runs: every sent row, now; returns the rows it moved. */
    static int pollAll(DataSource db, String gatewayUrl) {
        try (GatewayClient gateway = GatewayClient.of(gatewayUrl, Duration.ofSeconds(10))) {
            return pollAll(db, gateway);
        }
    }

    /** The same poll through {@code gateway}. */
    static int pollAll(DataSource db, RefundGateway gateway) {
        return RefundLifecycle.of(db, gateway).pollQuiet(Duration.ZERO).stream()
                .mapToInt(report -> report.settled().size() + report.returned().size()).sum();
    }

    @Override
    public void close() {
        server.stop(0);
        handlers.shutdownNow();
    }
}
