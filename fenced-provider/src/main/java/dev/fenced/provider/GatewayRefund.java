package dev.fenced.provider;

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
 * @param status the provider's word on the money, as Stripe's refund {@code status}: {@value #PENDING}
 *     (accepted, not final), {@value #SUCCEEDED}, {@value #FAILED} or {@value #CANCELED} (final: the
 *     money did not move); null when the provider did not say
 * @param failureReason why a refund failed or was canceled, the provider's code; null otherwise
 */
public record GatewayRefund(String id, String idempotencyKey, String reference, String merchant,
                            BigDecimal amount, String currency, long createdAt, Map<String, String> metadata,
                            String status, String failureReason) {
    public static final String PENDING = "pending";
    public static final String SUCCEEDED = "succeeded";
    public static final String FAILED = "failed";
    public static final String CANCELED = "canceled";

    public GatewayRefund {
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }

    /** A refund with metadata, its status unsaid. */
    public GatewayRefund(String id, String idempotencyKey, String reference, String merchant, BigDecimal amount, String currency,
                         long createdAt, Map<String, String> metadata) {
        this(id, idempotencyKey, reference, merchant, amount, currency, createdAt, metadata, null, null);
    }

    /** This refund as the provider now reports it. */
    public GatewayRefund withStatus(String status, String failureReason) {
        return new GatewayRefund(id, idempotencyKey, reference, merchant, amount, currency, createdAt, metadata, status, failureReason);
    }

    /** Whether the provider's word is final: succeeded, failed or canceled. */
    public boolean finalStatus() {
        return SUCCEEDED.equals(status) || FAILED.equals(status) || CANCELED.equals(status);
    }

    /** A refund without metadata. */
    public GatewayRefund(String id, String idempotencyKey, String reference, String merchant, BigDecimal amount, String currency,
                         long createdAt) {
        this(id, idempotencyKey, reference, merchant, amount, currency, createdAt, Map.of());
    }
}
