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
import java.math.BigDecimal;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The client of {@link PaymentGateway}. Every create carries an idempotency key: sending the same
 * request again with the same key returns the refund already created, and the same key with other
 * parameters is refused. Every failure comes out as a {@link GatewayException} whose
 * {@link GatewayException#outcome() outcome} says what it means for the money; this class is the one
 * place that decides it. Thread-safe.
 *
 * <p>On a machine of two cores or fewer, the JDK's {@code HttpClient} hands each answer of a call to
 * {@code CompletableFuture}'s default executor, which there starts a thread per task: a thread per
 * call. The {@code fenced} command line sets {@code java.util.concurrent.ForkJoinPool.common.parallelism}
 * to 2 on such machines; an application that makes many calls there may do the same (before
 * anything uses the common pool).
 */
public final class GatewayClient implements RefundGateway {
    // One pool of parser buffers for the process, not Jackson's default of one set per thread: a
    // worker keeps a thread per refund in flight, and per-thread buffers made up about a third of
    // the heap each in-flight refund cost (BENCHMARKS.md, Fleet).
    private static final ObjectMapper JSON = new ObjectMapper(JsonFactory.builder().recyclerPool(JsonRecyclerPools.newConcurrentDequePool()).build())
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    private static final int MAX_REASON = 200;

    private final URI base;
    private final String where;
    private final String authorization;
    private final HttpClient http;
    private final ThreadPoolExecutor httpTasks = httpTasks();
    private final Duration timeout;

    private GatewayClient(URI url, Duration timeout) {
        // Credentials in the URL become a Basic authorization header and are kept out of every URI
        // and message from here on.
        this.base = URI.create(url.getScheme() + "://" + url.getRawAuthority().substring(url.getRawAuthority().lastIndexOf('@') + 1)
                + (url.getRawPath() == null ? "" : url.getRawPath()));
        this.authorization = url.getUserInfo() == null ? null
                : "Basic " + Base64.getEncoder().encodeToString(url.getUserInfo().getBytes(StandardCharsets.UTF_8));
        this.where = base.getScheme() + "://" + base.getHost() + (base.getPort() < 0 ? "" : ":" + base.getPort());
        this.timeout = timeout;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).executor(httpTasks).build();
    }

    /**
     * A few threads that do all of the HTTP client's socket work (taking a pooled connection,
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
     * @throws IllegalArgumentException for a URL that is not http(s)://host[:port], or a timeout that is not positive
     */
    public static GatewayClient of(String url, Duration timeout) {
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("malformed gateway URL: it must look like http://host:port");
        }
        if (uri.getScheme() == null || !(uri.getScheme().equals("http") || uri.getScheme().equals("https")) || uri.getHost() == null) {
            throw new IllegalArgumentException("gateway URL must look like http://host:port");
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("gateway timeout must be positive, got " + timeout);
        }
        return new GatewayClient(uri, timeout);
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
        HttpRequest request;
        try {
            request = request("/refunds")
                    .header("Content-Type", "application/json")
                    .header("Idempotency-Key", idempotencyKey)
                    .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)))
                    .build();
        } catch (IOException e) {
            throw new GatewayException("could not encode the " + what + ": " + e.getMessage(), 0, Outcome.REJECTED, e);
        }
        return read(send(request, what), what, GatewayRefund.class);
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
        HttpRequest request = request("/ledger").GET().build();
        return read(send(request, "ledger"), "ledger", RefundList.class).refunds();
    }

    private List<GatewayRefund> refunds(String parameter, String value) {
        String what = "lookup by " + parameter;
        HttpRequest request = request("/refunds?" + parameter + "=" + URLEncoder.encode(value, StandardCharsets.UTF_8)).GET().build();
        return read(send(request, what), what, RefundList.class).refunds();
    }

    record RefundList(List<GatewayRefund> refunds) {
        RefundList {
            refunds = refunds == null ? List.of() : List.copyOf(refunds);
        }
    }

    private <T> T read(HttpResponse<byte[]> response, String what, Class<T> type) {
        try {
            return JSON.readValue(response.body(), type);
        } catch (IOException e) {
            // A 2xx whose body we cannot read: the call may have done its work.
            throw new GatewayException("unreadable answer from the gateway at " + where + " to the " + what, response.statusCode(),
                    Outcome.UNKNOWN, e);
        }
    }

    private HttpRequest.Builder request(String pathAndQuery) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(base.resolve(pathAndQuery)).timeout(timeout);
        return authorization == null ? builder : builder.header("Authorization", authorization);
    }

    /** {@link HttpClient#send}, with the exchange started on {@link #httpTasks} rather than on the calling thread. */
    private HttpResponse<byte[]> exchange(HttpRequest request) throws IOException, InterruptedException {
        CompletableFuture<HttpResponse<byte[]>> answer = CompletableFuture
                .supplyAsync(() -> http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray()), httpTasks).thenCompose(sent -> sent);
        try {
            return answer.get();
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

    private HttpResponse<byte[]> send(HttpRequest request, String what) {
        HttpResponse<byte[]> response;
        try {
            response = exchange(request);
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
        int status = response.statusCode();
        if (status >= 200 && status < 300) {
            return response;
        }
        throw new GatewayException("gateway answered " + status + " to the " + what + ": " + reason(response.body()), status,
                GatewayException.classify(status), retryAfter(response), null);
    }

    /** A {@code Retry-After} in seconds (the form payment APIs send); null when absent or given as a date. */
    private static Duration retryAfter(HttpResponse<byte[]> response) {
        return response.headers().firstValue("Retry-After").filter(value -> value.matches("\\d{1,6}"))
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

    @Override
    public String toString() {
        return "GatewayClient[" + where + "]";
    }
}
