package dev.fenced.gateway;

import com.fasterxml.jackson.databind.DeserializationFeature;
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
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * A simulated payment gateway over real HTTP on 127.0.0.1, with Stripe's idempotency semantics:
 * a replay with the same key returns the first result; the same key with different parameters is
 * an error, never a silent match. Every error answer is {@code {"error": message}}, plus a
 * {@code code} where a client must tell the cases apart.
 *
 * <ul>
 *   <li>{@code POST /refunds}, header {@code Idempotency-Key} (1 to 255 printable ASCII characters;
 *       required unless idempotency is off), body {@code {reference, merchant, amount, currency}}
 *       (reference and merchant 1 to 64 characters; amount a string or number, positive, at most
 *       two decimals and 9999999999.99; currency three capital letters):
 *       201 with the refund created; 200 with the refund already created for the same request
 *       under that key; 400 for a malformed request; 413 for a body over 64 KiB; 409 with
 *       {@code code: idempotency_key_reused} and the earlier {@code refund} for the same key with a
 *       different reference, merchant, amount or currency; 422 with {@code code: refund_refused}
 *       for an amount above {@link GatewayConfig#refuseAbove()}, nothing created, on every try.
 *       Injected faults: 503 (nothing created), 500 (created), a late answer (created).
 *   <li>{@code GET /refunds} with exactly one of {@code reference}, {@code idempotency_key} or
 *       {@code merchant}: 200 {@code {exists, refunds}}, in creation order; 400 otherwise.
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
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS) // a double would round the amount
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final int MAX_BODY = 64 * 1024;
    private static final int MAX_KEY = 255;
    private static final int MAX_FIELD = 64;
    /** Longer than any sane spelling of an amount up to 9999999999.99; BigDecimal parsing is superlinear. */
    private static final int MAX_AMOUNT_TEXT = 32;
    private static final Pattern PRINTABLE_ASCII = Pattern.compile("[\\x20-\\x7E]+");
    private static final Pattern CURRENCY = Pattern.compile("[A-Z]{3}");
    private static final Set<String> LOOKUPS = Set.of("reference", "idempotency_key", "merchant");
    private static final Duration RETRY_LISTEN = Duration.ofSeconds(1);

    private final GatewayConfig config;
    private final Ledger ledger;
    private final Random faults;
    private final ExecutorService executor = Executors.newFixedThreadPool(128, daemon("gateway-http"));
    private final ScheduledExecutorService restarts = Executors.newSingleThreadScheduledExecutor(daemon("gateway-restart"));
    private final int port;
    private volatile boolean faultsEnabled = true;

    private final Object lifecycle = new Object();
    private HttpServer server; // null during an outage; guarded by lifecycle
    private long outages; // lets a restart see that a later outage superseded it; guarded by lifecycle
    private boolean closed; // guarded by lifecycle

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
        try {
            return new PaymentGateway(config);
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
        this.faultsEnabled = enabled;
    }

    /** Every refund created so far, in order. */
    public List<GatewayRefund> ledger() {
        return ledger.all();
    }

    private HttpServer listen(int port) throws IOException {
        HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 256);
        http.setExecutor(executor);
        http.createContext("/refunds", this::refunds);
        http.createContext("/ledger", exchange -> handle(exchange, () -> {
            requireMethod(exchange, "GET");
            return new Response(200, Map.of("refunds", ledger.all()));
        }));
        http.createContext("/health", exchange -> handle(exchange, () -> new Response(200, Map.of("status", "ok"))));
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

    private void refunds(HttpExchange exchange) throws IOException {
        handle(exchange, () -> switch (exchange.getRequestMethod()) {
            case "POST" -> create(exchange);
            case "GET" -> find(exchange);
            default -> throw new HttpError(405, "use GET or POST");
        });
    }

    private Response find(HttpExchange exchange) {
        Map.Entry<String, String> lookup = lookup(exchange.getRequestURI().getRawQuery());
        String value = lookup.getValue();
        sleep(config.latency());
        List<GatewayRefund> found = switch (lookup.getKey()) {
            case "idempotency_key" -> ledger.byKey(value).stream().toList();
            case "merchant" -> ledger.matching(r -> r.merchant().equals(value));
            default -> ledger.matching(r -> r.reference().equals(value));
        };
        return new Response(200, Map.of("exists", !found.isEmpty(), "refunds", found));
    }

    private Response create(HttpExchange exchange) throws IOException {
        JsonNode body = readObject(exchange);
        String key = idempotencyKey(exchange);
        Ledger.Request request = request(body, key);
        sleep(config.latency());
        if (config.refuseAbove() != null && request.amount().compareTo(config.refuseAbove()) > 0) {
            return new Response(422, error("refund_refused", "refund of " + request.amount().toPlainString()
                    + " exceeds the limit of " + config.refuseAbove().toPlainString()));
        }
        double draw = draw();
        if (draw < config.failBefore()) {
            return new Response(503, Map.of("error", "injected fault before creating the refund"));
        }
        Ledger.Result result = ledger.createOrReplay(request, config.idempotency());
        if (result.outcome() == Ledger.Outcome.CONFLICT) {
            Map<String, Object> conflict = error("idempotency_key_reused",
                    "idempotency key " + shorten(key) + " was used for a different refund");
            conflict.put("refund", result.refund());
            return new Response(409, conflict);
        }
        if (draw < config.failBefore() + config.failAfter()) {
            return new Response(500, Map.of("error", "injected fault after creating the refund"));
        }
        if (draw < config.failBefore() + config.failAfter() + config.slow()) {
            sleep(config.slowDelay());
        }
        return new Response(result.outcome() == Ledger.Outcome.CREATED ? 201 : 200, result.refund());
    }

    private double draw() {
        synchronized (faults) {
            return faultsEnabled ? faults.nextDouble() : 1.0;
        }
    }

    /** The key, or null when idempotency is off and none was sent. */
    private String idempotencyKey(HttpExchange exchange) {
        String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
        if (key == null || key.isEmpty()) {
            if (config.idempotency()) {
                throw badRequest("the Idempotency-Key header is required");
            }
            return null;
        }
        if (key.length() > MAX_KEY || !PRINTABLE_ASCII.matcher(key).matches()) {
            throw badRequest("the Idempotency-Key header must be 1 to " + MAX_KEY + " printable ASCII characters, got "
                    + shorten(key) + " (" + key.length() + " characters)");
        }
        return key;
    }

    private static JsonNode readObject(HttpExchange exchange) throws IOException {
        byte[] bytes;
        try (InputStream in = exchange.getRequestBody()) {
            bytes = in.readNBytes(MAX_BODY + 1);
        }
        if (bytes.length > MAX_BODY) {
            throw new HttpError(413, "the body is larger than " + MAX_BODY / 1024 + " KiB");
        }
        JsonNode body;
        try {
            body = JSON.readTree(bytes);
        } catch (IOException e) {
            throw badRequest("the body is not JSON");
        }
        if (body == null || !body.isObject()) {
            throw badRequest("the body must be a JSON object");
        }
        return body;
    }

    private static Ledger.Request request(JsonNode body, String key) {
        String reference = text(body, "reference", MAX_FIELD);
        String merchant = text(body, "merchant", MAX_FIELD);
        String currency = text(body, "currency", MAX_FIELD);
        if (!CURRENCY.matcher(currency).matches()) {
            throw badRequest("currency must be three capital letters, got " + shorten(currency));
        }
        return new Ledger.Request(key == null ? reference : key, reference, merchant, amount(body.get("amount")), currency);
    }

    private static String text(JsonNode body, String field, int maxLength) {
        JsonNode node = body.get(field);
        if (node == null || node.isNull() || (node.isTextual() && node.textValue().isBlank())) {
            throw badRequest("the field '" + field + "' is required");
        }
        if (!node.isTextual() || node.textValue().length() > maxLength) {
            throw badRequest("the field '" + field + "' must be a string of 1 to " + maxLength + " characters, got "
                    + shorten(node.asText()));
        }
        return node.textValue();
    }

    private static BigDecimal amount(JsonNode node) {
        BigDecimal amount = parseAmount(node);
        if (!GatewayConfig.isValidAmount(amount)) {
            throw badRequest("amount must be positive, with at most two decimals, at most "
                    + GatewayConfig.MAX_AMOUNT.toPlainString() + ", got " + shorten(node.asText()));
        }
        return amount.setScale(GatewayConfig.MAX_AMOUNT.scale()); // safe only now that its scale is bounded
    }

    private static BigDecimal parseAmount(JsonNode node) {
        if (node == null || node.isNull()) {
            throw badRequest("the field 'amount' is required");
        }
        if (node.isNumber()) {
            return node.decimalValue();
        }
        String text = node.isTextual() ? node.textValue().strip() : "";
        if (text.isEmpty() || text.length() > MAX_AMOUNT_TEXT) {
            throw badRequest("amount must be a decimal string or number, got " + shorten(node.toString()));
        }
        try {
            return new BigDecimal(text);
        } catch (NumberFormatException e) {
            throw badRequest("amount is not a number, got " + shorten(text));
        }
    }

    /** The one lookup of a GET /refunds: its name and its value. */
    private static Map.Entry<String, String> lookup(String rawQuery) {
        List<Map.Entry<String, String>> parameters = parameters(rawQuery);
        if (parameters.size() != 1 || !LOOKUPS.contains(parameters.get(0).getKey()) || parameters.get(0).getValue().isBlank()) {
            throw badRequest("give exactly one of the query parameters reference, idempotency_key or merchant");
        }
        return parameters.get(0);
    }

    private static List<Map.Entry<String, String>> parameters(String rawQuery) {
        if (rawQuery == null || rawQuery.isEmpty()) {
            return List.of();
        }
        try {
            return Arrays.stream(rawQuery.split("&")).filter(pair -> !pair.isEmpty()).map(pair -> {
                int eq = pair.indexOf('=');
                return eq < 0 ? Map.entry(decode(pair), "") : Map.entry(decode(pair.substring(0, eq)), decode(pair.substring(eq + 1)));
            }).toList();
        } catch (IllegalArgumentException e) {
            throw badRequest("the query is not URL-encoded");
        }
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }

    private static void requireMethod(HttpExchange exchange, String method) {
        if (!exchange.getRequestMethod().equals(method)) {
            throw new HttpError(405, "use " + method);
        }
    }

    /** Error messages echo at most this much of what the client sent, however large it was. */
    private static String shorten(String text) {
        return text.length() <= 24 ? text : text.substring(0, 24) + "...";
    }

    private static void sleep(Duration duration) {
        if (duration.isZero()) {
            return;
        }
        try {
            Thread.sleep(duration.toMillis()); // the simulated network and processing time of a remote gateway
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static ThreadFactory daemon(String name) {
        return runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    private record Response(int status, Object body) {
    }

    /** The body of a definitive refusal: a client tells the cases apart by {@code code}. */
    private static Map<String, Object> error(String code, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", message);
        body.put("code", code);
        return body;
    }

    /** A request the gateway refuses before doing anything: its status and message. */
    private static final class HttpError extends RuntimeException {
        private final int status;

        HttpError(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    private static HttpError badRequest(String message) {
        return new HttpError(400, message);
    }

    private interface Handler {
        Response handle() throws IOException;
    }

    private static void handle(HttpExchange exchange, Handler handler) throws IOException {
        Response response;
        try {
            response = handler.handle();
        } catch (HttpError e) {
            response = new Response(e.status, Map.of("error", e.getMessage()));
        } catch (RuntimeException e) {
            response = new Response(500, Map.of("error", String.valueOf(e.getMessage())));
        }
        byte[] bytes = JSON.writeValueAsBytes(response.body());
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        try {
            exchange.sendResponseHeaders(response.status(), bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        } catch (IOException clientGone) {
            // the client timed out, or an outage cut the connection; what was created stays created
        } finally {
            exchange.close();
        }
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
        executor.shutdownNow();
        try {
            executor.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ledger.close();
    }
}
