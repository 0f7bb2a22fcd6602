package dev.fenced.gateway;

import static dev.fenced.gateway.GatewayHttp.error;
import static dev.fenced.gateway.GatewayHttp.shorten;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import dev.fenced.provider.GatewayRefund;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code /refunds} of {@link PaymentGateway}: creates a refund or replays it under its key, refuses
 * a reused key with different parameters and an amount over the limit, injects the configured
 * faults and latency, and looks refunds up. Thread-safe: the ledger orders creations, and the
 * fault draws come from one seeded generator under its own lock.
 */
final class RefundEndpoint {
    private final GatewayConfig config;
    private final Ledger ledger;
    private final RefundStatuses statuses;
    private final Random faults;
    private volatile boolean faultsEnabled = true;
    private volatile boolean loseAnswers;
    private volatile boolean lookupsDown;
    private final Set<String> answersLost = ConcurrentHashMap.newKeySet();
    private final AtomicInteger inFlight = new AtomicInteger();

    private final WebhookSender webhooks;

    /** @param webhooks where created refunds' events go; null sends none */
    RefundEndpoint(GatewayConfig config, Ledger ledger, RefundStatuses statuses, WebhookSender webhooks) {
        this.config = config;
        this.ledger = ledger;
        this.statuses = statuses;
        this.webhooks = webhooks;
        this.faults = new Random(config.seed());
    }

    void faultsEnabled(boolean enabled) {
        this.faultsEnabled = enabled;
    }

    void loseAnswers(boolean lose) {
        this.loseAnswers = lose;
    }

    void lookupsDown(boolean down) {
        this.lookupsDown = down;
    }

    /** The refunds whose answer {@link #loseAnswers} withheld, created or replayed, by id. */
    Set<String> answersLost() {
        return Set.copyOf(answersLost);
    }

    void handle(HttpExchange exchange) throws IOException {
        inFlight.incrementAndGet();
        try {
            GatewayHttp.handle(exchange, () -> {
                authenticate(exchange);
                return switch (exchange.getRequestMethod()) {
                    case "POST" -> create(exchange);
                    case "GET" -> find(exchange);
                    default -> throw new GatewayHttp.HttpError(405, "use GET or POST");
                };
            });
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /** With an API key configured, the Basic authorization's user must be that key; the answer never repeats what was sent. */
    private void authenticate(HttpExchange exchange) {
        if (config.apiKey() == null) {
            return;
        }
        String header = exchange.getRequestHeaders().getFirst("Authorization");
        String user = null;
        if (header != null && header.startsWith("Basic ")) {
            try {
                String credentials = new String(Base64.getDecoder().decode(header.substring(6).strip()), StandardCharsets.UTF_8);
                user = credentials.contains(":") ? credentials.substring(0, credentials.indexOf(':')) : credentials;
            } catch (IllegalArgumentException malformed) {
                user = null;
            }
        }
        if (user == null || !MessageDigest.isEqual(user.getBytes(StandardCharsets.UTF_8), config.apiKey().getBytes(StandardCharsets.UTF_8))) {
            throw new GatewayHttp.HttpError(401, header == null ? "no API key: send it as the user of a Basic authorization"
                    : "invalid API key");
        }
    }

    /** Refund requests and lookups received and not yet answered. */
    int inFlight() {
        return inFlight.get();
    }

    private GatewayHttp.Response find(HttpExchange exchange) {
        Map.Entry<String, String> lookup = RefundRequests.lookup(exchange.getRequestURI().getRawQuery());
        String value = lookup.getValue();
        sleep(config.latency());
        if (lookupsDown) {
            return new GatewayHttp.Response(503, error("lookups_unavailable", "refund lookups are down; refund requests are served"));
        }
        List<GatewayRefund> found = switch (lookup.getKey()) {
            case "idempotency_key" -> ledger.byKey(value).stream().toList();
            case "merchant" -> ledger.matching(r -> r.merchant().equals(value));
            case "id" -> ledger.matching(r -> r.id().equals(value));
            default -> ledger.matching(r -> r.reference().equals(value));
        };
        return new GatewayHttp.Response(200, Map.of("exists", !found.isEmpty(), "refunds", found.stream().map(statuses::current).toList()));
    }

    private GatewayHttp.Response create(HttpExchange exchange) throws IOException {
        JsonNode body = RefundRequests.readObject(exchange);
        String key = RefundRequests.idempotencyKey(exchange, config.idempotency());
        Ledger.Request request = RefundRequests.request(body, key);
        sleep(config.latency());
        if (config.refuseAbove() != null && request.amount().compareTo(config.refuseAbove()) > 0) {
            return new GatewayHttp.Response(422, error("refund_refused", "refund of " + request.amount().toPlainString()
                    + " exceeds the limit of " + config.refuseAbove().toPlainString()));
        }
        double draw = draw();
        if (draw < 1.0 && draw >= 1.0 - config.rateLimited()) { // 1.0: faults switched off
            long seconds = (config.retryAfter().toMillis() + 999) / 1000;
            return new GatewayHttp.Response(429, error("rate_limited", "too many requests; retry after " + seconds + " s"),
                    Map.of("Retry-After", Long.toString(seconds)));
        }
        if (draw < config.failBefore()) {
            return new GatewayHttp.Response(503, Map.of("error", "injected fault before creating the refund"));
        }
        Ledger.Result result = ledger.createOrReplay(request, config.idempotency());
        if (webhooks != null && result.outcome() == Ledger.Outcome.CREATED) {
            webhooks.created(result.refund());
        }
        if (result.outcome() == Ledger.Outcome.CONFLICT) {
            Map<String, Object> conflict = error("idempotency_key_reused",
                    "idempotency key " + shorten(key) + " was used for a different refund");
            conflict.put("refund", statuses.current(result.refund()));
            return new GatewayHttp.Response(409, conflict);
        }
        if (loseAnswers) {
            answersLost.add(result.refund().id());
            return new GatewayHttp.Response(500, Map.of("error", "answer lost after creating the refund"));
        }
        if (draw < config.failBefore() + config.failAfter()) {
            return new GatewayHttp.Response(500, Map.of("error", "injected fault after creating the refund"));
        }
        if (draw < config.failBefore() + config.failAfter() + config.slow()) {
            sleep(config.slowDelay());
        }
        return new GatewayHttp.Response(result.outcome() == Ledger.Outcome.CREATED ? 201 : 200, statuses.current(result.refund()));
    }

    /** The next fault draw: below the configured shares a fault strikes; 1.0 when faults are switched off. */
    double draw() {
        synchronized (faults) {
            return faultsEnabled ? faults.nextDouble() : 1.0;
        }
    }

    /** The simulated network and processing time of a remote gateway, on this thread. */
    static void sleep(Duration duration) {
        if (duration.isZero()) {
            return;
        }
        try {
            Thread.sleep(duration.toMillis()); // the simulated network and processing time of a remote gateway
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
