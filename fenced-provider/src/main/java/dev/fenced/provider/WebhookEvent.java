package dev.fenced.provider;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One event a provider delivers by webhook, in Stripe's envelope:
 * {@code {"id": "evt_...", "object": "event", "type": "refund.updated", "created": <unix seconds>,
 * "data": {"object": <the refund>}}}. Only refund events carry a {@link #refund()}; the refund is
 * the provider's view at {@link #created()}, which may be older than the view a later event (or a
 * lookup) gives: deliveries come late, twice, and out of order.
 *
 * @param id the provider's event id, the same on every delivery of the event
 * @param type e.g. {@value #REFUND_CREATED}, {@value #REFUND_UPDATED}, {@value #REFUND_FAILED}
 * @param created when the provider made the event, unix seconds
 * @param refund the refund the event is about; null for an event of another kind
 */
public record WebhookEvent(String id, String type, long created, GatewayRefund refund) {
    public static final String REFUND_CREATED = "refund.created";
    public static final String REFUND_UPDATED = "refund.updated";
    public static final String REFUND_FAILED = "refund.failed";

    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS) // a double would round the amount
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .configure(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES, false) // 10.00 stays 10.00, not 1E+1
            .build();
    /** Event bodies larger than this are refused unread: a refund event is well under 4 KiB. */
    public static final int MAX_BODY = 64 * 1024;

    public WebhookEvent {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(type, "type");
    }

    /** Whether the event is about a refund. */
    public boolean aboutRefund() {
        return type.startsWith("refund.") && refund != null;
    }

    /**
     * Reads a delivery's body; call it only after the signature held.
     *
     * @throws WebhookRejectedException for a body that is not a well-formed event, or a refund event
     *     whose refund lacks its id, reference, merchant, amount, currency or status
     */
    public static WebhookEvent parse(byte[] body) {
        if (body.length > MAX_BODY) {
            throw new WebhookRejectedException("event body is larger than " + MAX_BODY + " bytes");
        }
        JsonNode event;
        try {
            event = JSON.readTree(body);
        } catch (IOException e) {
            throw new WebhookRejectedException("event body is not JSON");
        }
        if (event == null || !event.isObject()) {
            throw new WebhookRejectedException("event body is not a JSON object");
        }
        String id = event.path("id").asText("");
        String type = event.path("type").asText("");
        if (!id.matches("[\\x21-\\x7e]{1,255}")) {
            throw new WebhookRejectedException("event has no valid id");
        }
        if (!type.matches("[a-z_.]{1,64}")) {
            throw new WebhookRejectedException("event " + id + " has no valid type");
        }
        long created = event.path("created").asLong(0);
        if (!type.startsWith("refund.")) {
            return new WebhookEvent(id, type, created, null);
        }
        GatewayRefund refund;
        try {
            refund = JSON.treeToValue(event.path("data").path("object"), GatewayRefund.class);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw new WebhookRejectedException("event " + id + " does not carry a readable refund");
        }
        if (refund == null || blank(refund.id()) || blank(refund.reference()) || blank(refund.merchant())
                || refund.amount() == null || blank(refund.currency()) || blank(refund.status())) {
            throw new WebhookRejectedException("event " + id + " carries a refund without its id, reference, merchant, amount,"
                    + " currency or status");
        }
        if (refund.reference().length() > 64 || refund.merchant().length() > 64) {
            throw new WebhookRejectedException("event " + id + " carries a reference or merchant longer than 64 characters");
        }
        return new WebhookEvent(id, type, created, refund);
    }

    /** The body a provider sends for this event. */
    public byte[] toJson() {
        Map<String, Object> envelope = new LinkedHashMap<>();
        envelope.put("id", id);
        envelope.put("object", "event");
        envelope.put("type", type);
        envelope.put("created", created);
        envelope.put("data", Map.of("object", refund == null ? Map.of() : refund));
        try {
            return JSON.writeValueAsBytes(envelope);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("an event could not be written as JSON: " + e.getMessage(), e);
        }
    }

    private static boolean blank(String value) {
        return value == null || value.isBlank();
    }
}
