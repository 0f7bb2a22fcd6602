package dev.fenced.gateway;

import com.sun.net.httpserver.HttpServer;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.MinorUnits;
import dev.fenced.provider.WebhookEvent;
import dev.fenced.provider.WebhookSignature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * A simulated payment gateway over real HTTP on 127.0.0.1, with Stripe's idempotency semantics:
 * a replay with the same key returns the first result; the same key with different parameters is
 * an error, never a silent match. Every error answer is {@code {"error": message}}, plus a
 * {@code code} where a client must tell the cases apart.
 *
 * <ul>
 *   <li>{@code POST /refunds}, header {@code Idempotency-Key} (1 to 255 printable ASCII characters;
 *       required unless idempotency is off), body {@code {reference, merchant, amount, currency}}
 *       (reference and merchant 1 to 64 characters; currency an ISO 4217 code with at most three
 *       minor-unit digits; amount a string or number, positive, at most ten digits before the
 *       decimal point and no more decimals than its currency has: {@link MinorUnits}) and an optional
 *       {@code metadata} object (at most 20 keys of 1 to 40 printable ASCII characters, string
 *       values of at most 64), kept on the refund and not compared on a replay:
 *       201 with the refund created; 200 with the refund already created for the same request
 *       under that key; 400 for a malformed request, with the reason (JPY 1.50 is refused, never
 *       rounded); 413 for a body over 64 KiB; 409 with
 *       {@code code: idempotency_key_reused} and the earlier {@code refund} for the same key with a
 *       different reference, merchant, amount or currency; 422 with {@code code: refund_refused}
 *       for an amount above {@link GatewayConfig#refuseAbove()}, nothing created, on every try.
 *       Injected faults: 503 (nothing created), 500 (created), a late answer (created).
 *   <li>{@code GET /refunds} with exactly one of {@code reference}, {@code idempotency_key},
 *       {@code merchant} or {@code id}: 200 {@code {exists, refunds}}, in creation order, each with its
 *       {@code status} now ({@link GatewayConfig#settleAfter()}); 400 otherwise. A key is
 *       found only while it is retained ({@link GatewayConfig#keyRetention()}); a reference or a
 *       merchant always.
 *   <li>Webhooks, with {@link GatewayConfig#webhookUrl()}: {@code POST} of each refund's events
 *       ({@link WebhookEvent}, signed as {@link WebhookSignature} checks), retried on any answer
 *       but 2xx, lost, duplicated or reordered as configured.
 *   <li>{@code /v1/charges} and {@code /v1/refunds}: a Stripe-shaped surface for Stripe's own client
 *       library ({@link StripeEndpoint} says what it models and what it does not).
 *   <li>{@code GET /ledger}: 200 {@code {refunds}}, every refund created, in order: the ground truth.
 *   <li>{@code GET /health}: 200 {@code {status: "ok"}}.
 * </ul>
 *
 * <p>The configured latency is added to every POST and to {@code GET /refunds}, not to the ledger
 * or health. With a ledger file, every refund is on disk before its creation is answered, and the
 * ledger survives a restart. {@link #outage} takes the gateway off its port and brings it back on
 * the same port. Thread-safe. It is a test peer, not a payment system: loopback only, no
 * authentication, no accounts, and a single lock (and fsync) orders every creation.
 */
public final class PaymentGateway implements AutoCloseable {
    private static final Duration RETRY_LISTEN = Duration.ofSeconds(1);

    private final Ledger ledger;
    private final RefundStatuses statuses;
    private final RefundEndpoint refunds;
    private final StripeEndpoint stripe;
    private final WebhookSender webhooks; // null without a webhook URL
    private final ExecutorService executor = Executors.newFixedThreadPool(128, daemon("gateway-http"));
    /** Brings the gateway back after an outage; shut down by close(). */
    private final ScheduledExecutorService restarts;
    private final int port;

    private final Object lifecycle = new Object();
    private HttpServer server; // null during an outage; guarded by lifecycle
    private long outages; // lets a restart see that a later outage superseded it; guarded by lifecycle
    private boolean closed; // guarded by lifecycle

    static {
        useTcpNoDelay();
    }

    /**
     * Turns TCP_NODELAY on for the JDK HTTP servers this process starts, unless
     * {@code sun.net.httpserver.nodelay} is set: the JDK server writes an answer's headers and body
     * apart, and without it each answer waits on the client's delayed ACK, about 40 ms more per
     * call (every call of a client on {@code HttpURLConnection}, Stripe's library among them). The
     * JDK reads the property once, when the process's first server starts: call this before that.
     */
    public static void useTcpNoDelay() {
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    private PaymentGateway(GatewayConfig config, ScheduledExecutorService restarts) throws IOException {
        this.restarts = Objects.requireNonNull(restarts, "restarts");
        this.ledger = new Ledger(config.ledgerFile(), config.clock(), config.keyRetention());
        this.statuses = new RefundStatuses(config);
        this.webhooks = config.webhookUrl() == null ? null : new WebhookSender(config, statuses);
        this.refunds = new RefundEndpoint(config, ledger, statuses, webhooks);
        this.stripe = new StripeEndpoint(config, ledger, statuses, webhooks);
        try {
            this.server = listen(config.port());
        } catch (IOException e) {
            close();
            throw e;
        }
        this.port = server.getAddress().getPort();
        if (!config.downFor().isZero()) {
            outage(config.downFor());
        }
    }

    /**
     * Starts the gateway: it listens at once, or after {@link GatewayConfig#downFor()} on the port
     * it chose at start.
     *
     * @throws UncheckedIOException when the port is taken or the ledger file cannot be read or written
     * @throws IllegalStateException when the ledger file is corrupt before its last line
     */
    public static PaymentGateway start(GatewayConfig config) {
        return start(config, Executors.newSingleThreadScheduledExecutor(daemon("gateway-restart")));
    }

    /** As {@link #start(GatewayConfig)}, with the outages' restarts on {@code restarts}: a test's manual scheduler moves them in time. */
    static PaymentGateway start(GatewayConfig config, ScheduledExecutorService restarts) {
        try {
            return new PaymentGateway(config, restarts);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the gateway on port " + config.port() + ": " + e.getMessage(), e);
        }
    }

    /** The port, the same across outages. */
    public int port() {
        return port;
    }

    public String url() {
        return "http://127.0.0.1:" + port;
    }

    /** Whether the gateway accepts connections now: false during an outage and after close. */
    public boolean listening() {
        synchronized (lifecycle) {
            return server != null;
        }
    }

    /**
     * Stops listening at once and listens again on the same port after {@code length}, with the
     * same ledger. Connections are refused meanwhile; exchanges in progress may be cut, and what
     * they created stays created. A second outage replaces the rest of the first.
     *
     * @throws IllegalArgumentException for a negative length
     * @throws IllegalStateException once the gateway is closed
     */
    public void outage(Duration length) {
        Objects.requireNonNull(length, "length");
        if (length.isNegative()) {
            throw new IllegalArgumentException("an outage must not be negative, got " + length);
        }
        synchronized (lifecycle) {
            if (closed) {
                throw new IllegalStateException("the gateway is closed");
            }
            stopListening();
            long outage = ++outages;
            restarts.schedule(() -> listenAgain(outage), length.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Switches the configured faults on or off at run time, e.g. off for a final drain. */
    public void faultsEnabled(boolean enabled) {
        refunds.faultsEnabled(enabled);
    }

    /**
     * While on, every refund request of the {@code /refunds} API is carried out (created, or replayed
     * under its key) and answered 500, as when the connection breaks after the provider acted: the
     * caller cannot tell whether its refund exists. Off by default; {@link #faultsEnabled} does not
     * switch it.
     */
    public void loseAnswers(boolean lose) {
        refunds.loseAnswers(lose);
    }

    /**
     * While on, every lookup of the {@code /refunds} API (by key, reference, merchant or id) is
     * answered 503 and refund requests are still served: a provider whose read side is down. Off by
     * default; {@link #faultsEnabled} does not switch it.
     */
    public void lookupsDown(boolean down) {
        refunds.lookupsDown(down);
    }

    /** The ids of the refunds whose answer {@link #loseAnswers} withheld (created or replayed), since the start. */
    public Set<String> answersLost() {
        return refunds.answersLost();
    }

    /**
     * Refund requests and lookups received and not yet answered, those whose client gave up
     * waiting included: a test waits for 0 to know the gateway has done all it was asked.
     */
    public int requestsInFlight() {
        return refunds.inFlight();
    }

    /** What the webhook sender did so far; all zero without a webhook URL. */
    public WebhookStats webhookStats() {
        return webhooks == null ? WebhookStats.NONE : webhooks.stats();
    }

    /** Every refund created so far, in order, each with its status now. */
    public List<GatewayRefund> ledger() {
        return ledger.all().stream().map(statuses::current).toList();
    }

    private HttpServer listen(int port) throws IOException {
        HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 256);
        http.setExecutor(executor);
        http.createContext("/refunds", refunds::handle);
        http.createContext("/v1/", exchange -> stripe.handle(exchange, refunds));
        http.createContext("/ledger", exchange -> GatewayHttp.handle(exchange, () -> {
            GatewayHttp.requireMethod(exchange, "GET");
            return new GatewayHttp.Response(200, Map.of("refunds", ledger()));
        }));
        http.createContext("/health", exchange -> GatewayHttp.handle(exchange,
                () -> new GatewayHttp.Response(200, Map.of("status", "ok"))));
        http.start();
        return http;
    }

    private void listenAgain(long outage) {
        synchronized (lifecycle) {
            if (closed || outage != outages) {
                return;
            }
            try {
                server = listen(port);
            } catch (IOException e) {
                // Another process took the port meanwhile: keep trying, as a restarting service would.
                System.err.println("gateway: could not listen again on port " + port + " (" + e.getMessage() + "), retrying");
                restarts.schedule(() -> listenAgain(outage), RETRY_LISTEN.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    private void stopListening() {
        if (server != null) {
            server.stop(0);
            server = null;
        }
    }

    private static ThreadFactory daemon(String name) {
        return runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    /** Stops listening for good, also during an outage, and closes the ledger. Idempotent. */
    @Override
    public void close() {
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
            stopListening();
        }
        restarts.shutdownNow();
        if (webhooks != null) {
            webhooks.close();
        }
        executor.shutdownNow();
        try {
            executor.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ledger.close();
    }
}
