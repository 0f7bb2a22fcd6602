package dev.fenced.gateway;

import java.math.BigDecimal;

/**
 * A refund the gateway created: the outside world's record, and the ground truth every check of
 * exactly-once is made against.
 *
 * @param id the gateway's own id, e.g. {@code gw_000042}
 * @param idempotencyKey the key it was created under (the refund id in the settlement worker)
 * @param reference the caller's reference (the refund id)
 * @param createdAt epoch milliseconds
 */
public record GatewayRefund(String id, String idempotencyKey, String reference, String merchant,
                            BigDecimal amount, String currency, long createdAt) {
}
