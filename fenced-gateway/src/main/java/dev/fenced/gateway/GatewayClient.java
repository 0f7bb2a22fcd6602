package dev.fenced.gateway;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The client of {@link PaymentGateway}. Every create carries an idempotency key: sending the same
 * request again with the same key returns the refund already created. Thread-safe.
 */
public final class GatewayClient {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final HttpClient http;
    private final Duration timeout;

    private GatewayClient(URI base, Duration timeout) {
        this.base = base;
        this.timeout = timeout;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).build();
    }

    /**
     * A client for the gateway at {@code url} ({@code http://host:port}).
     *
     * @throws IllegalArgumentException for a URL that is not http(s)://host[:port]
     */
    public static GatewayClient of(String url, Duration timeout) {
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("malformed gateway URL '" + url + "'");
        }
        if (uri.getScheme() == null || !(uri.getScheme().equals("http") || uri.getScheme().equals("https")) || uri.getHost() == null) {
            throw new IllegalArgumentException("gateway URL must look like http://host:port, got '" + url + "'");
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("gateway timeout must be positive, got " + timeout);
        }
        return new GatewayClient(uri, timeout);
    }

    /** Creates a refund, or gets the one already created under {@code idempotencyKey}. */
    public GatewayRefund createRefund(String idempotencyKey, String reference, String merchant, BigDecimal amount, String currency) {
        Map<String, String> body = new LinkedHashMap<>();
        body.put("reference", reference);
        body.put("merchant", merchant);
        body.put("amount", amount.toPlainString());
        body.put("currency", currency);
        try {
            HttpRequest request = HttpRequest.newBuilder(base.resolve("/refunds"))
                    .timeout(timeout)
                    .header("Content-Type", "application/json")
                    .header("Idempotency-Key", idempotencyKey)
                    .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)))
                    .build();
            HttpResponse<byte[]> response = send(request, "refund " + reference);
            return JSON.readValue(response.body(), GatewayRefund.class);
        } catch (IOException e) {
            throw new GatewayException("unreadable gateway answer for refund " + reference + ": " + e.getMessage(), 0, true, e);
        }
    }

    /** The refunds the gateway holds for {@code reference}; the first, if any. */
    public Optional<GatewayRefund> findByReference(String reference) {
        HttpRequest request = HttpRequest.newBuilder(base.resolve("/refunds?reference=" + URLEncoder.encode(reference, StandardCharsets.UTF_8)))
                .timeout(timeout).GET().build();
        try {
            JsonNode answer = JSON.readTree(send(request, "lookup of " + reference).body());
            List<GatewayRefund> refunds = JSON.convertValue(answer.get("refunds"), new TypeReference<>() { });
            return refunds.stream().findFirst();
        } catch (IOException e) {
            throw new GatewayException("unreadable gateway answer for lookup of " + reference, 0, true, e);
        }
    }

    /** Every refund the gateway has created, in order. */
    public List<GatewayRefund> ledger() {
        HttpRequest request = HttpRequest.newBuilder(base.resolve("/ledger")).timeout(timeout).GET().build();
        try {
            JsonNode answer = JSON.readTree(send(request, "ledger").body());
            return JSON.convertValue(answer.get("refunds"), new TypeReference<>() { });
        } catch (IOException e) {
            throw new GatewayException("unreadable gateway ledger", 0, true, e);
        }
    }

    private HttpResponse<byte[]> send(HttpRequest request, String what) {
        HttpResponse<byte[]> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new GatewayException("gateway at " + base + " did not answer the " + what + ": " + e, 0, true, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new GatewayException("interrupted waiting for the gateway: " + what, 0, true, e);
        }
        int status = response.statusCode();
        if (status >= 200 && status < 300) {
            return response;
        }
        String error = new String(response.body(), StandardCharsets.UTF_8);
        throw new GatewayException("gateway answered " + status + " to the " + what + ": " + error, status, status >= 500, null);
    }

    @Override
    public String toString() {
        return "GatewayClient[" + base + "]";
    }
}
