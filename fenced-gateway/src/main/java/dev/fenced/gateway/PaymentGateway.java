package dev.fenced.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A simulated payment gateway over real HTTP on loopback.
 *
 * <ul>
 *   <li>{@code POST /refunds} with an {@code Idempotency-Key} header and a JSON body
 *       {@code {reference, merchant, amount, currency}}: 201 with the refund it created, or 200 with
 *       the refund already created under that key (same body). The same key with a different
 *       amount, merchant, currency or reference: 422.
 *   <li>{@code GET /refunds?reference=r_815}: {@code {exists, refunds}}.
 *   <li>{@code GET /ledger}: every refund created, in order: the ground truth.
 *   <li>{@code GET /health}.
 * </ul>
 *
 * <p>Honours idempotency keys unless configured not to; the ledger survives a restart when it has
 * a file. It is a test peer, not a payment system: no authentication, loopback only.
 */
public final class PaymentGateway implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final GatewayConfig config;
    private final Ledger ledger;
    private final HttpServer server;
    private final ExecutorService executor;
    private final Random faults;
    private volatile boolean faultsEnabled = true;

    static {
        // Without TCP_NODELAY the JDK server's header and body writes meet the client's delayed
        // ACK and every call costs about 40 ms more than the configured latency.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    private PaymentGateway(GatewayConfig config) throws IOException {
        this.config = config;
        this.ledger = new Ledger(config.ledgerFile());
        this.faults = new Random(config.seed());
        this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", config.port()), 256);
        this.executor = Executors.newFixedThreadPool(128, runnable -> {
            Thread thread = new Thread(runnable, "gateway-http");
            thread.setDaemon(true);
            return thread;
        });
        server.setExecutor(executor);
        server.createContext("/refunds", this::refunds);
        server.createContext("/ledger", exchange -> handle(exchange, () -> {
            requireMethod(exchange, "GET");
            return new Response(200, Map.of("refunds", ledger.all()));
        }));
        server.createContext("/health", exchange -> handle(exchange, () -> new Response(200, Map.of("status", "ok"))));
        server.start();
    }

    /**
     * Starts the gateway.
     *
     * @throws UncheckedIOException when the port is taken or the ledger file cannot be opened
     */
    public static PaymentGateway start(GatewayConfig config) {
        try {
            return new PaymentGateway(config);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the gateway on port " + config.port() + ": " + e.getMessage(), e);
        }
    }

    public int port() {
        return server.getAddress().getPort();
    }

    public String url() {
        return "http://127.0.0.1:" + port();
    }

    /** Switches the configured faults on or off at run time, e.g. off for a final drain. */
    public void faultsEnabled(boolean enabled) {
        this.faultsEnabled = enabled;
    }

    /** Every refund created so far, in order. */
    public List<GatewayRefund> ledger() {
        return ledger.all();
    }

    private void refunds(HttpExchange exchange) throws IOException {
        handle(exchange, () -> switch (exchange.getRequestMethod()) {
            case "POST" -> create(exchange);
            case "GET" -> find(exchange);
            default -> new Response(405, Map.of("error", "use GET or POST"));
        });
    }

    private Response find(HttpExchange exchange) {
        String reference = queryParameter(exchange, "reference")
                .orElseThrow(() -> new BadRequest("the reference query parameter is required"));
        sleep(config.latency().toMillis());
        List<GatewayRefund> found = ledger.byReference(reference);
        return new Response(200, Map.of("exists", !found.isEmpty(), "refunds", found));
    }

    private Response create(HttpExchange exchange) throws IOException {
        String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
        JsonNode body;
        try (InputStream in = exchange.getRequestBody()) {
            body = JSON.readTree(in);
        } catch (IOException e) {
            throw new BadRequest("the body is not JSON");
        }
        String reference = text(body, "reference");
        String merchant = text(body, "merchant");
        String currency = text(body, "currency");
        if (!currency.matches("[A-Z]{3}")) {
            throw new BadRequest("currency must be three capital letters, got " + currency);
        }
        BigDecimal amount;
        try {
            amount = new BigDecimal(text(body, "amount"));
        } catch (NumberFormatException e) {
            throw new BadRequest("amount is not a number");
        }
        if (amount.signum() <= 0 || amount.scale() > 2) {
            throw new BadRequest("amount must be positive with at most two decimals, got " + amount.toPlainString());
        }
        if (config.idempotency() && (key == null || key.isBlank())) {
            throw new BadRequest("the Idempotency-Key header is required");
        }
        sleep(config.latency().toMillis());
        double draw;
        synchronized (faults) {
            draw = faultsEnabled ? faults.nextDouble() : 1.0;
        }
        if (draw < config.failBefore()) {
            return new Response(503, Map.of("error", "injected fault before creating the refund"));
        }
        if (config.idempotency()) {
            Optional<GatewayRefund> earlier = ledger.byKey(key);
            if (earlier.isPresent() && !sameRequest(earlier.get(), reference, merchant, amount, currency)) {
                return new Response(422, Map.of("error", "idempotency key " + key + " was used for a different refund",
                        "refund", earlier.get()));
            }
        }
        Map.Entry<GatewayRefund, Boolean> created = ledger.create(key == null ? reference : key, reference, merchant,
                amount.setScale(2), currency, config.idempotency());
        if (draw < config.failBefore() + config.failAfter()) {
            return new Response(500, Map.of("error", "injected fault after creating the refund"));
        }
        if (draw < config.failBefore() + config.failAfter() + config.slow()) {
            sleep(config.slowDelay().toMillis());
        }
        return new Response(created.getValue() ? 201 : 200, created.getKey());
    }

    private static boolean sameRequest(GatewayRefund earlier, String reference, String merchant, BigDecimal amount, String currency) {
        return earlier.reference().equals(reference) && earlier.merchant().equals(merchant)
                && earlier.amount().compareTo(amount) == 0 && earlier.currency().equals(currency);
    }

    private static String text(JsonNode body, String field) {
        JsonNode node = body == null ? null : body.get(field);
        if (node == null || node.isNull() || node.asText().isBlank()) {
            throw new BadRequest("the field '" + field + "' is required");
        }
        return node.asText();
    }

    private static Optional<String> queryParameter(HttpExchange exchange, String name) {
        String query = exchange.getRequestURI().getRawQuery();
        if (query == null) {
            return Optional.empty();
        }
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0 && URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8).equals(name)) {
                String value = URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                return value.isBlank() ? Optional.empty() : Optional.of(value);
            }
        }
        return Optional.empty();
    }

    private static void requireMethod(HttpExchange exchange, String method) {
        if (!exchange.getRequestMethod().equals(method)) {
            throw new BadRequest("use " + method);
        }
    }

    private static void sleep(long millis) {
        if (millis <= 0) {
            return;
        }
        try {
            Thread.sleep(millis); // the simulated network and processing time of a remote gateway
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private record Response(int status, Object body) {
    }

    private static final class BadRequest extends RuntimeException {
        BadRequest(String message) {
            super(message);
        }
    }

    private interface Handler {
        Response handle() throws IOException;
    }

    private static void handle(HttpExchange exchange, Handler handler) throws IOException {
        Response response;
        try {
            response = handler.handle();
        } catch (BadRequest e) {
            response = new Response(400, Map.of("error", e.getMessage()));
        } catch (RuntimeException e) {
            Map<String, Object> error = new LinkedHashMap<>();
            error.put("error", String.valueOf(e.getMessage()));
            response = new Response(500, error);
        }
        byte[] bytes = JSON.writeValueAsBytes(response.body());
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        try {
            exchange.sendResponseHeaders(response.status(), bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        } catch (IOException clientGone) {
            // the client timed out and closed the connection; what was created stays created
        } finally {
            exchange.close();
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
        try {
            executor.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ledger.close();
    }
}
