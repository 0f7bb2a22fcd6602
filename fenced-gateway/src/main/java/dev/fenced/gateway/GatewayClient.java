package dev.fenced.gateway;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fenced.provider.GatewayException.Outcome;
import dev.fenced.provider.GatewayException;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.RefundGateway;
import java.io.IOException;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.math.BigDecimal;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The client of {@link PaymentGateway}. Every create carries an idempotency key: sending the same
 * request again with the same key returns the refund already created, and the same key with other
 * parameters is refused. Every failure comes out as a {@link GatewayException} whose
 * {@link GatewayException#outcome() outcome} says what it means for the money; this class is the one
 * place that decides it. Thread-safe.
 *
 * <p>An {@code http} gateway is called on the calling thread, over a pool of keep-alive connections
 * ({@link Http11Client}): a call costs no hand-off between threads. An {@code https} gateway is called
 * through the JDK's {@code HttpClient}, and so is an {@code http} one when the system property
 * {@value #HTTP_CLIENT_PROPERTY} is {@code jdk} (to compare the two, or should a server or proxy not
 * get along with the built-in client; the default is {@code builtin}). The JDK's client, on a machine
 * of two cores or fewer, hands each answer of a call to {@code CompletableFuture}'s default executor,
 * which there starts a thread per task: a thread per call. The {@code fenced} command line sets
 * {@code java.util.concurrent.ForkJoinPool.common.parallelism} to 2 on such machines; an application
 * that makes many https calls there may do the same (before anything uses the common pool).
 */
public final class GatewayClient implements RefundGateway, AutoCloseable {
    // One pool of parser buffers for the process, not Jackson's default of one set per thread: a
    // worker keeps a thread per refund in flight, and per-thread buffers made up about a third of
    // the heap each in-flight refund cost (BENCHMARKS.md, Fleet).
    private static final ObjectMapper JSON = new ObjectMapper(JsonFactory.builder().recyclerPool(JsonRecyclerPools.newConcurrentDequePool()).build())
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    private static final int MAX_REASON = 200;

    /** The system property that chooses the client for {@code http} gateways: {@code builtin} (the default) or {@code jdk}. */
    public static final String HTTP_CLIENT_PROPERTY = "fenced.gateway.httpClient";
    private static final Cleaner IDLE_CONNECTIONS = Cleaner.create();

    private final URI base;
    private final String where;
    private final String authorization;
    /** The built-in client, for http: exchanges on the calling thread, no hand-offs. Null when the JDK's is used. */
    private final Http11Client plain;
    /** The JDK's client (https, or http when asked) and the threads it works on. Null when the built-in one is used. */
    private final HttpClient http;
    private final ThreadPoolExecutor httpTasks;
    /** Closes the built-in client's idle connections once this client is unreachable, or when it is closed; null for the JDK's. */
    private final Cleaner.Cleanable idleConnections;
    private final Duration timeout;

    private GatewayClient(URI url, Duration timeout, boolean builtin) {
        // Credentials in the URL become a Basic authorization header and are kept out of every URI
        // and message from here on.
        this.base = URI.create(url.getScheme() + "://" + url.getRawAuthority().substring(url.getRawAuthority().lastIndexOf('@') + 1)
                + (url.getRawPath() == null ? "" : url.getRawPath()));
        this.authorization = url.getUserInfo() == null ? null
                : "Basic " + Base64.getEncoder().encodeToString(url.getUserInfo().getBytes(StandardCharsets.UTF_8));
        this.where = base.getScheme() + "://" + base.getHost() + (base.getPort() < 0 ? "" : ":" + base.getPort());
        this.timeout = timeout;
        if (builtin && base.getScheme().equals("http")) {
            this.plain = new Http11Client(base.getHost(), base.getPort() < 0 ? 80 : base.getPort());
            this.httpTasks = null;
            this.http = null;
            // The pool's idle sockets are closed once this client is unreachable: nothing else would close them.
            this.idleConnections = IDLE_CONNECTIONS.register(this, plain::close);
        } else {
            this.plain = null;
            this.idleConnections = null;
            this.httpTasks = httpTasks();
            this.http = HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).executor(httpTasks).build();
        }
    }

    /**
     * For the JDK's client, a few threads that do all of its socket work (taking a pooled connection,
     * which reads it to see that it is open; writing requests; handing over answers). Each thread
     * that touches a socket keeps the JDK's per-thread socket-buffer cache (a 1,024-slot array,
     * about 4 KiB of heap): with the calling threads and the client's default of a new thread per
     * concurrent call doing it, that was about a third of what a refund in flight cost
     * (BENCHMARKS.md, Fleet). The callers only wait; idle threads end after 30 s.
     */
    private static ThreadPoolExecutor httpTasks() {
        AtomicInteger count = new AtomicInteger();
        int threads = Math.max(2, Runtime.getRuntime().availableProcessors());
        ThreadPoolExecutor executor = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), runnable -> {
            Thread thread = new Thread(runnable, "gateway-client-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    /**
     * A client for the gateway at {@code url} ({@code http://host:port}).
     *
     * @throws IllegalArgumentException for a URL that is not http(s)://host[:port], a timeout that is not positive,
     *     or a {@value #HTTP_CLIENT_PROPERTY} that is neither {@code builtin} nor {@code jdk}
     */
    public static GatewayClient of(String url, Duration timeout) {
        String client = System.getProperty(HTTP_CLIENT_PROPERTY, "builtin").trim().toLowerCase(Locale.ROOT);
        if (!client.equals("builtin") && !client.equals("jdk")) {
            throw new IllegalArgumentException(HTTP_CLIENT_PROPERTY + " must be builtin or jdk, got '" + client + "'");
        }
        return of(url, timeout, client.equals("builtin"));
    }

    /** {@link #of(String, Duration)}, with the client for an http gateway chosen here: the built-in one, or the JDK's. */
    static GatewayClient of(String url, Duration timeout, boolean builtin) {
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("malformed gateway URL: it must look like http://host:port");
        }
        if (uri.getScheme() == null || !(uri.getScheme().equals("http") || uri.getScheme().equals("https")) || uri.getHost() == null) {
            throw new IllegalArgumentException("gateway URL must look like http://host:port");
        }
        if (uri.getPort() == 0 || uri.getPort() > 65_535) {
            throw new IllegalArgumentException("gateway URL's port must be 1 to 65535, got " + uri.getPort());
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("gateway timeout must be positive, got " + timeout);
        }
        return new GatewayClient(uri, timeout, builtin);
    }

    /**
     * Creates a refund, or gets the one already created under {@code idempotencyKey} with the same
     * parameters.
     *
     * @throws GatewayException {@link Outcome#REJECTED} for a refusal (including the key reused
     *     with other parameters), {@link Outcome#UNKNOWN} when the refund may exist,
     *     {@link Outcome#UNAVAILABLE} when the request was not processed
     */
    @Override
    public GatewayRefund createRefund(String idempotencyKey, String reference, String merchant, BigDecimal amount, String currency) {
        return createRefund(idempotencyKey, reference, merchant, amount, currency, Map.of());
    }

    /**
     * Creates a refund with {@code metadata} kept on it (at most 20 keys of 1 to 40 printable ASCII
     * characters, values of at most 64), or gets the one already created under
     * {@code idempotencyKey} with the same parameters. The gateway does not compare metadata: a
     * replay returns the first refund's.
     *
     * @throws GatewayException as {@link #createRefund(String, String, String, BigDecimal, String)}
     */
    @Override
    public GatewayRefund createRefund(String idempotencyKey, String reference, String merchant, BigDecimal amount, String currency,
                                      Map<String, String> metadata) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("reference", reference);
        body.put("merchant", merchant);
        body.put("amount", amount.toPlainString());
        body.put("currency", currency);
        if (!metadata.isEmpty()) {
            body.put("metadata", metadata);
        }
        String what = "refund " + reference;
        byte[] json;
        try {
            json = JSON.writeValueAsBytes(body);
        } catch (IOException e) {
            throw new GatewayException("could not encode the " + what + ": " + e.getMessage(), 0, Outcome.REJECTED, e);
        }
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", "application/json");
        headers.put("Idempotency-Key", idempotencyKey);
        return read(send("POST", "/refunds", headers, json, what), what, GatewayRefund.class);
    }

    /** The refund created under {@code idempotencyKey}, if any: how a caller in doubt learns what happened. */
    @Override
    public Optional<GatewayRefund> findByKey(String idempotencyKey) {
        return refunds("idempotency_key", idempotencyKey).stream().findFirst();
    }

    /** The refunds the gateway holds for {@code reference}; the first, if any. */
    public Optional<GatewayRefund> findByReference(String reference) {
        return refunds("reference", reference).stream().findFirst();
    }

    /** The gateway's lookup by reference, which does not depend on the key's retention; one call. */
    @Override
    public List<GatewayRefund> findByReference(String merchant, String reference) {
        return refunds("reference", reference).stream().filter(refund -> merchant.equals(refund.merchant())).toList();
    }

    /** One refund by the gateway's id, with its status now; one call. */
    @Override
    public Optional<GatewayRefund> refundById(String merchant, String refundId) {
        return refunds("id", refundId).stream().filter(refund -> merchant.equals(refund.merchant())).findFirst();
    }

    /** The timeout of every call, connection included. */
    @Override
    public Optional<Duration> callTimeout() {
        return Optional.of(timeout);
    }

    /** Every refund the gateway made for {@code merchant}, in creation order. */
    @Override
    public List<GatewayRefund> refundsOf(String merchant) {
        return refunds("merchant", merchant);
    }

    /** Every refund the gateway has created, in order. */
    public List<GatewayRefund> ledger() {
        return read(send("GET", "/ledger", Map.of(), null, "ledger"), "ledger", RefundList.class).refunds();
    }

    private List<GatewayRefund> refunds(String parameter, String value) {
        String what = "lookup by " + parameter;
        return read(send("GET", "/refunds?" + parameter + "=" + URLEncoder.encode(value, StandardCharsets.UTF_8), Map.of(), null, what), what,
                RefundList.class).refunds();
    }

    record RefundList(List<GatewayRefund> refunds) {
        RefundList {
            refunds = refunds == null ? List.of() : List.copyOf(refunds);
        }
    }

    private <T> T read(Http11Client.Response response, String what, Class<T> type) {
        try {
            return JSON.readValue(response.body(), type);
        } catch (IOException e) {
            // A 2xx whose body we cannot read: the call may have done its work.
            throw new GatewayException("unreadable answer from the gateway at " + where + " to the " + what, response.status(),
                    Outcome.UNKNOWN, e);
        }
    }

    /** One exchange, by the call's deadline: on the calling thread with the built-in client, else through the JDK's. */
    private Http11Client.Response exchange(String method, String pathAndQuery, Map<String, String> headers, byte[] body)
            throws IOException, InterruptedException {
        URI uri = base.resolve(pathAndQuery);
        Map<String, String> all = headers;
        if (authorization != null) {
            all = new LinkedHashMap<>(headers);
            all.put("Authorization", authorization);
        }
        if (plain != null) {
            String target = uri.getRawQuery() == null ? uri.getRawPath() : uri.getRawPath() + "?" + uri.getRawQuery();
            try {
                return plain.exchange(method, target, all, body, System.nanoTime() + timeout.toNanos());
            } finally {
                // A client made for one call may be unreachable while the call runs: its Cleaner must not close the pool under it.
                Reference.reachabilityFence(this);
            }
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(timeout);
        if (body == null) {
            request.GET();
        } else {
            request.method(method, HttpRequest.BodyPublishers.ofByteArray(body));
        }
        all.forEach(request::header);
        HttpResponse<byte[]> response = exchange(request.build());
        Map<String, String> first = new HashMap<>();
        response.headers().map().forEach((name, values) -> {
            if (!values.isEmpty()) {
                first.put(name.toLowerCase(Locale.ROOT), values.get(0));
            }
        });
        return new Http11Client.Response(response.statusCode(), first, response.body());
    }

    /** {@link HttpClient#send}, with the exchange started on {@link #httpTasks} rather than on the calling thread. */
    private HttpResponse<byte[]> exchange(HttpRequest request) throws IOException, InterruptedException {
        CompletableFuture<HttpResponse<byte[]>> answer = CompletableFuture
                .supplyAsync(() -> http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray()), httpTasks).thenCompose(sent -> sent);
        try {
            // The JDK's request timeout ends when the answer's head arrives: a body that stalls would hold the caller for ever.
            return answer.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            answer.cancel(true);
            throw new HttpTimeoutException("no whole answer within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            answer.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() instanceof CompletionException wrapped && wrapped.getCause() != null ? wrapped.getCause() : e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IOException(cause);
        }
    }

    private Http11Client.Response send(String method, String pathAndQuery, Map<String, String> headers, byte[] body, String what) {
        Http11Client.Response response;
        try {
            response = exchange(method, pathAndQuery, headers, body);
        } catch (HttpConnectTimeoutException | ConnectException e) {
            throw new GatewayException("gateway at " + where + " is unreachable for the " + what + " (" + e.getClass().getSimpleName() + ")",
                    0, Outcome.UNAVAILABLE, e);
        } catch (IOException e) {
            throw new GatewayException("gateway at " + where + " gave no answer to the " + what + " (" + e.getClass().getSimpleName() + ")",
                    0, Outcome.UNKNOWN, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new GatewayException("interrupted waiting for the gateway's answer to the " + what, 0, Outcome.UNKNOWN, e);
        }
        int status = response.status();
        if (status >= 200 && status < 300) {
            return response;
        }
        throw new GatewayException("gateway answered " + status + " to the " + what + ": " + reason(response.body()), status,
                GatewayException.classify(status), retryAfter(response), null);
    }

    /** A {@code Retry-After} in seconds (the form payment APIs send); null when absent or given as a date. */
    private static Duration retryAfter(Http11Client.Response response) {
        return response.header("Retry-After").map(value -> value.split(",")[0].trim()) // a repeated field comes joined.filter(value -> value.matches("\\d{1,6}"))
                .map(value -> Duration.ofSeconds(Long.parseLong(value))).orElse(null);
    }

    /** The gateway's own reason, from its JSON {@code error} field, cut short. */
    private static String reason(byte[] body) {
        String text;
        try {
            JsonNode error = JSON.readTree(body).path("error");
            text = error.isMissingNode() ? new String(body, StandardCharsets.UTF_8) : error.asText();
        } catch (IOException e) {
            text = new String(body, StandardCharsets.UTF_8);
        }
        text = text.replaceAll("\\s+", " ").strip();
        return text.length() <= MAX_REASON ? text : text.substring(0, MAX_REASON) + "...";
    }

    /** Closes the idle connections (http); a client no longer reachable has them closed for it. */
    @Override
    public void close() {
        if (idleConnections != null) {
            idleConnections.clean(); // once: plain.close(), and the Cleaner forgets this client
        }
    }

    @Override
    public String toString() {
        return "GatewayClient[" + where + "]";
    }
}
