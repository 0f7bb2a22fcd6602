package dev.fenced.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.provider.RefundGateway;
import dev.fenced.provider.WebhookEvent;
import dev.fenced.provider.WebhookSignature;
import dev.fenced.settlement.RefundLifecycle;
import dev.fenced.settlement.WebhookReceiver;
import dev.fenced.settlement.metrics.SettlementMeters;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "webhooks", mixinStandardHelpOptions = true,
        description = {"Receive the payment provider's signed refund events until stopped, moving sent refunds to settled or returned.",
                "POST /webhooks, signed in Stripe's scheme (Stripe-Signature: t=...,v1=HMAC-SHA256 of \"t.body\"). A sent row moves"
                        + " to settled, or to returned when the provider reports the refund failed or canceled (a settled one too, when"
                        + " its refund fails after it succeeded); nothing ever moves back, and each event counts once.",
                "Answers: 200 handled (or handled before), 400 bad signature, stale timestamp or not an event (nothing written),"
                        + " 409 the row is not confirmed sent yet (deliver again), 413 too large, 503 the database failed (deliver again).",
                "Exit codes: 0 stopped by SIGTERM or SIGINT, 1 runtime failure, 2 usage error, 10 deliveries or a poll still"
                        + " running 10 s after the signal."})
final class WebhooksCommand implements Callable<Integer> {
    /** The longest a delivery may take to arrive or to be answered: a stalled client never holds a thread longer. */
    private static final String MAX_EXCHANGE_SECONDS = "30";
    /** How long deliveries in progress may take to finish after SIGTERM; the database's own waits are shorter. */
    private static final Duration DELIVERIES_DRAIN = Duration.ofSeconds(10);
    /** The backstop, should closing the server or the pool hang: past it the process exits with {@link Drain#TOO_SLOW}. */
    private static final Duration DRAIN = Duration.ofSeconds(30);

    @Option(names = "--port", defaultValue = "8090", description = "port to listen on, 0 for any (default ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--bind", defaultValue = "127.0.0.1", paramLabel = "ADDRESS",
            description = "address to listen on; put a TLS proxy in front for the provider (default ${DEFAULT-VALUE})")
    String bind;

    @Option(names = "--webhook-secret", paramLabel = "SECRET", split = ",", defaultValue = "${env:FENCED_WEBHOOK_SECRETS}",
            description = "the provider's signing secret; give two during a rotation (repeat the option, or comma-separate them"
                    + " in env FENCED_WEBHOOK_SECRETS, which keeps them out of ps). Never printed.")
    List<String> secrets;

    @Option(names = "--tolerance", defaultValue = "5m", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "refuse deliveries signed longer ago (or further ahead) than this (default ${DEFAULT-VALUE})")
    Duration tolerance;

    @Option(names = "--poll-after", defaultValue = "1h", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "with a gateway: ask it about sent refunds without news for this long, the backstop for lost events"
                    + " (default ${DEFAULT-VALUE})")
    Duration pollAfter;

    @Option(names = "--poll-every", defaultValue = "5m", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "with a gateway: how often to look for such refunds (default ${DEFAULT-VALUE})")
    Duration pollEvery;

    @Option(names = "--metrics-port", description = "serve the receiver's meters for Prometheus at http://HOST:PORT/metrics (0: any free port)")
    Integer metricsPort;

    @Option(names = "--metrics-host", defaultValue = "127.0.0.1", description = "the address --metrics-port listens on (default ${DEFAULT-VALUE})")
    String metricsHost;

    @Mixin
    DatabaseOptions databaseOptions;

    @Mixin
    GatewayOptions gatewayOptions;

    @Mixin
    DatabaseWaitOptions databaseWaits;

    @Override
    public Integer call() throws InterruptedException {
        List<String> given = secrets == null ? List.of() : secrets.stream().filter(s -> s != null && !s.isBlank()).toList();
        if (given.isEmpty()) {
            throw new UsageException("needs --webhook-secret or the environment variable FENCED_WEBHOOK_SECRETS");
        }
        if (port < 0 || port > 65535) {
            throw new UsageException("--port must be 0 to 65535, got " + port);
        }
        if (tolerance.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new UsageException("--tolerance must be at least 1s (timestamps are whole seconds), got " + tolerance);
        }
        if (pollEvery.isNegative() || pollEvery.isZero()) {
            throw new UsageException("--poll-every must be positive, got " + pollEvery);
        }
        WebhookSignature signature;
        try {
            signature = WebhookSignature.of(given, tolerance, Clock.systemUTC());
        } catch (IllegalArgumentException e) {
            throw new UsageException("--webhook-secret: " + e.getMessage()); // the message never shows the secret
        }
        InetSocketAddress address = new InetSocketAddress(bind, port);
        if (address.isUnresolved()) {
            throw new UsageException("--bind " + bind + " is not an address of this machine");
        }
        String dbUrl = databaseOptions.requireUrl();
        boolean polling = gatewayOptions.gatewayUrl != null && !gatewayOptions.gatewayUrl.isBlank();
        RefundGateway gateway = polling ? Connections.gateway(gatewayOptions.gatewayUrl) : null;
        // The JDK server waits without bound for a slow client unless told: seconds, read once when the server class loads.
        System.setProperty("sun.net.httpserver.maxReqTime", System.getProperty("sun.net.httpserver.maxReqTime", MAX_EXCHANGE_SECONDS));
        System.setProperty("sun.net.httpserver.maxRspTime", System.getProperty("sun.net.httpserver.maxRspTime", MAX_EXCHANGE_SECONDS));
        HikariDataSource db = Connections.database(dbUrl, 4, databaseWaits.resolve(Duration.ofSeconds(10)));
        HttpServer server;
        try {
            server = HttpServer.create(address, 64);
        } catch (IOException | IllegalArgumentException e) {
            db.close();
            throw new UncheckedIOException("could not listen on " + bind + ":" + port + ": " + e.getMessage(),
                    e instanceof IOException io ? io : new IOException(e));
        }
        WebhookReceiver receiver = WebhookReceiver.of(db, signature);
        ExecutorService handlers = Executors.newFixedThreadPool(4);
        ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor();
        MetricsEndpoint metrics;
        try {
            metrics = metricsPort == null ? null : MetricsEndpoint.serve(metricsHost, metricsPort);
        } catch (RuntimeException e) {
            server.stop(0);
            db.close();
            throw e;
        }
        SettlementMeters meters = metrics == null ? null : metrics.settlementMeters();
        try (Drain drain = Drain.onSignal(DRAIN); metrics) {
            boolean stopped = false;
            try {
                server.setExecutor(handlers);
                server.createContext("/webhooks", exchange -> handle(exchange, receiver, meters));
                if (polling) {
                    RefundLifecycle lifecycle = RefundLifecycle.of(db, gateway);
                    poller.scheduleWithFixedDelay(() -> poll(lifecycle, meters), pollEvery.toMillis(), pollEvery.toMillis(),
                            TimeUnit.MILLISECONDS);
                }
                server.start();
                if (metrics != null) {
                    System.err.println("webhooks: metrics at http://" + metricsHost + ":" + metrics.port() + "/metrics");
                }
                String host = bind.contains(":") ? "[" + bind + "]" : bind; // an IPv6 address in a URL
                System.out.println("webhooks listening on http://" + host + ":" + server.getAddress().getPort() + "/webhooks ("
                        + seconds(tolerance) + " tolerance, " + given.size() + (given.size() == 1 ? " secret" : " secrets")
                        + (polling ? "; polling the gateway for sent refunds without news for " + seconds(pollAfter) + ", every "
                        + seconds(pollEvery) + ")" : "; no --gateway-url: lost events wait for fenced poll)"));
                System.out.flush();
                drain.awaitRequest();
                server.stop(1); // a delivery in progress may finish within a second; the provider delivers again what it cut
                stopped = true;
                poller.shutdown();
                handlers.shutdown();
                boolean drained = handlers.awaitTermination(DELIVERIES_DRAIN.toSeconds(), TimeUnit.SECONDS)
                        & poller.awaitTermination(DELIVERIES_DRAIN.toSeconds(), TimeUnit.SECONDS);
                if (!drained) {
                    System.err.println("webhooks: deliveries or a poll still running " + DELIVERIES_DRAIN.toSeconds()
                            + " s after the signal; stopping without them (the provider delivers them again)");
                    return Drain.TOO_SLOW;
                }
                return 0;
            } finally {
                if (!stopped) {
                    server.stop(0);
                }
                poller.shutdownNow();
                handlers.shutdownNow();
                db.close(); // inside the drain: should closing hang, its deadline still ends the process
            }
        }
    }

    private static String seconds(Duration duration) {
        return duration.toMillis() % 1000 == 0 ? duration.toSeconds() + " s" : duration.toMillis() / 1000.0 + " s";
    }

    /** One sweep: a line for each merchant where something moved or went unanswered; a failure is a line, and the next sweep tries again. */
    private void poll(RefundLifecycle lifecycle, SettlementMeters meters) {
        try {
            for (RefundLifecycle.Report report : lifecycle.pollQuiet(pollAfter)) {
                if (meters != null) {
                    meters.providerNews("poll", "settled", report.settled().size());
                    meters.providerNews("poll", "returned", report.returned().size());
                    meters.providerNews("poll", "unanswered", report.unanswered());
                    meters.providerNews("poll", "missing", report.missing().size());
                }
                if (report.settled().isEmpty() && report.returned().isEmpty() && report.unanswered() == 0 && report.missing().isEmpty()) {
                    continue;
                }
                (report.unanswered() > 0 || !report.missing().isEmpty() ? System.err : System.out).println("webhooks: poll "
                        + report.merchant() + ": " + report.settled().size() + " settled, " + report.returned().size() + " returned"
                        + (report.returned().isEmpty() ? "" : " (" + String.join(", ", report.returned()) + ")") + ", "
                        + report.unanswered() + " without an answer, " + report.missing().size() + " not held by the gateway as recorded");
            }
        } catch (RuntimeException e) {
            System.err.println("webhooks: poll failed, tried again in " + pollEvery.toSeconds() + " s: " + FencedCli.describe(e));
        }
    }

    private static void handle(HttpExchange exchange, WebhookReceiver receiver, SettlementMeters meters) throws IOException {
        try (exchange) {
            if (!exchange.getRequestURI().getPath().equals("/webhooks")) {
                answer(exchange, 404, "no such path: POST events to /webhooks");
                return;
            }
            if (!exchange.getRequestMethod().equals("POST")) {
                exchange.getResponseHeaders().set("Allow", "POST");
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            byte[] body = readAtMost(exchange.getRequestBody(), WebhookEvent.MAX_BODY);
            if (body == null) {
                answer(exchange, 413, "event body is larger than " + WebhookEvent.MAX_BODY + " bytes");
                return;
            }
            WebhookReceiver.Receipt receipt = receiver.receive(exchange.getRequestHeaders().getFirst(WebhookSignature.HEADER), body);
            if (meters != null) {
                meters.providerNews("webhook", receipt.outcome().name().toLowerCase(Locale.ROOT), 1);
            }
            String line = "webhooks: " + (receipt.eventId() == null ? "" : receipt.eventId() + " ") + receipt.outcome().name()
                    .toLowerCase(Locale.ROOT).replace('_', '-') + ": " + receipt.message();
            (receipt.status() >= 400 ? System.err : System.out).println(line);
            answer(exchange, receipt.status(), receipt.message());
        }
    }

    /** The body, or null when it is longer than {@code limit}. */
    private static byte[] readAtMost(InputStream in, int limit) throws IOException {
        byte[] body = in.readNBytes(limit + 1);
        return body.length > limit ? null : Arrays.copyOf(body, body.length);
    }

    private static void answer(HttpExchange exchange, int status, String message) throws IOException {
        byte[] bytes = (message + "\n").getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
