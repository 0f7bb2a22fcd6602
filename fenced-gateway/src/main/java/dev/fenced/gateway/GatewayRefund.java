package dev.fenced.gateway;

import java.math.BigDecimal;
import java.util.Map;

/**
 * A refund the gateway created: the outside world's record, and the ground truth every check of
 * exactly-once is made against.
 *
 * @param id the gateway's own id, e.g. {@code gw_000042}
 * @param idempotencyKey the key it was created under
 * @param reference the caller's reference (the refund id)
 * @param createdAt epoch milliseconds
 * @param metadata what the caller attached to the request, kept as sent, like a payment provider's
 *     {@code metadata} (the settlement worker names the refund's owner there); empty, never null,
 *     for a refund created without it
 */
public record GatewayRefund(String id, String idempotencyKey, String reference, String merchant,
                            BigDecimal amount, String currency, long createdAt, Map<String, String> metadata) {
    public GatewayRefund {
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }

    /** A refund without metadata. */
    public GatewayRefund(String id, String idempotencyKey, String reference, String merchant, BigDecimal amount, String currency,
                         long createdAt) {
        this(id, idempotencyKey, reference, merchant, amount, currency, createdAt, Map.of());
    }
}
