package dev.fenced.gateway;

import static dev.fenced.gateway.GatewayHttp.badRequest;
import static dev.fenced.gateway.GatewayHttp.shorten;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import dev.fenced.provider.MinorUnits;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads and checks what a client sent to {@code /refunds}: the body, the idempotency key and the
 * lookup of a GET. Every check fails with an {@link GatewayHttp.HttpError} that echoes at most a
 * short prefix of the bad input, before the gateway does anything.
 */
final class RefundRequests {
    private static final int MAX_BODY = 64 * 1024;
    private static final int MAX_KEY = 255;
    private static final int MAX_FIELD = 64;
    /** Tighter than Stripe's metadata (50 keys of 40 characters, values of 500): enough for a refund's owner. */
    private static final int MAX_METADATA_KEYS = 20;
    private static final int MAX_METADATA_KEY = 40;
    /** Longer than any sane spelling of an amount up to 9999999999.999; BigDecimal parsing is superlinear. */
    private static final int MAX_AMOUNT_TEXT = 32;
    private static final Pattern PRINTABLE_ASCII = Pattern.compile("[\\x20-\\x7E]+");
    private static final Pattern CURRENCY = Pattern.compile("[A-Z]{3}");
    private static final Set<String> LOOKUPS = Set.of("reference", "idempotency_key", "merchant", "id");

    private RefundRequests() {
    }

    /** The body as a JSON object, at most 64 KiB. */
    static JsonNode readObject(HttpExchange exchange) throws IOException {
        byte[] bytes;
        try (InputStream in = exchange.getRequestBody()) {
            // A body of known length is read to that length: up to 8 KiB into an array of its size, not an 8 KiB scratch and a copy.
            long length = declaredLength(exchange);
            bytes = in.readNBytes(length >= 0 && length <= MAX_BODY ? (int) length : MAX_BODY + 1);
        }
        if (bytes.length > MAX_BODY) {
            throw new GatewayHttp.HttpError(413, "the body is larger than " + MAX_BODY / 1024 + " KiB");
        }
        JsonNode body;
        try {
            body = GatewayHttp.JSON.readTree(bytes);
        } catch (IOException e) {
            throw badRequest("the body is not JSON");
        }
        if (body == null || !body.isObject()) {
            throw badRequest("the body must be a JSON object");
        }
        return body;
    }

    /**
     * The request's {@code Content-Length}, or -1 when it sent none, one that is not a number, or
     * a chunked body (which the server reads as chunked, whatever length it declares).
     */
    private static long declaredLength(HttpExchange exchange) {
        if (exchange.getRequestHeaders().containsKey("Transfer-Encoding")) {
            return -1;
        }
        String length = exchange.getRequestHeaders().getFirst("Content-Length");
        if (length == null || length.isEmpty() || length.length() > 18 || !length.chars().allMatch(Character::isDigit)) {
            return -1;
        }
        return Long.parseLong(length);
    }

    /** The key, or null when it is not {@code required} and none was sent. */
    static String idempotencyKey(HttpExchange exchange, boolean required) {
        String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
        if (key == null || key.isEmpty()) {
            if (required) {
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

    /** The refund asked for; without a key, the reference stands in for it. */
    static Ledger.Request request(JsonNode body, String key) {
        String reference = text(body, "reference", MAX_FIELD);
        String merchant = text(body, "merchant", MAX_FIELD);
        String currency = text(body, "currency", MAX_FIELD);
        if (!CURRENCY.matcher(currency).matches()) {
            throw badRequest("currency must be three capital letters, got " + shorten(currency));
        }
        return new Ledger.Request(key == null ? reference : key, reference, merchant, amount(body.get("amount"), currency), currency,
                metadata(body.get("metadata")));
    }

    /** The one lookup of a GET /refunds: its name and its value. */
    static Map.Entry<String, String> lookup(String rawQuery) {
        List<Map.Entry<String, String>> parameters = parameters(rawQuery);
        if (parameters.size() != 1 || !LOOKUPS.contains(parameters.get(0).getKey()) || parameters.get(0).getValue().isBlank()) {
            throw badRequest("give exactly one of the query parameters reference, idempotency_key, merchant or id");
        }
        return parameters.get(0);
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

    /** An optional object of string values; absent or null is no metadata. */
    private static Map<String, String> metadata(JsonNode node) {
        if (node == null || node.isNull()) {
            return Map.of();
        }
        if (!node.isObject() || node.size() > MAX_METADATA_KEYS) {
            throw badRequest("metadata must be an object of at most " + MAX_METADATA_KEYS + " string values, got " + shorten(node.toString()));
        }
        Map<String, String> metadata = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> entry : node.properties()) {
            String name = entry.getKey();
            if (name.isEmpty() || name.length() > MAX_METADATA_KEY || !PRINTABLE_ASCII.matcher(name).matches()) {
                throw badRequest("a metadata key must be 1 to " + MAX_METADATA_KEY + " printable ASCII characters, got " + shorten(name));
            }
            JsonNode value = entry.getValue();
            if (!value.isTextual() || value.textValue().length() > MAX_FIELD) {
                throw badRequest("metadata '" + shorten(name) + "' must be a string of at most " + MAX_FIELD + " characters, got "
                        + shorten(value.toString()));
            }
            if (!StripeEndpoint.RESERVED_KEYS.contains(name)) { // the Stripe surface's own marks: no caller sets them
                metadata.put(name, value.textValue());
            }
        }
        return metadata;
    }

    /** The amount in its currency's minor units, as a payment provider checks it: too many decimals are refused, never rounded. */
    private static BigDecimal amount(JsonNode node, String currency) {
        BigDecimal amount = parseAmount(node);
        Optional<String> problem = MinorUnits.problem(amount, currency);
        if (problem.isPresent()) {
            throw badRequest(problem.get());
        }
        return MinorUnits.exact(amount, currency);
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
}
