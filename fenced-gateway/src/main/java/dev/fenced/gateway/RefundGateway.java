package dev.fenced.gateway;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A payment provider as the settlement worker and reconciliation see it: a refund is created under
 * an idempotency key, and looked up by that key. {@link GatewayClient} implements it for the
 * simulated gateway; an application implements it for its own provider.
 *
 * <p>What an implementation must guarantee: the same key with the same parameters never makes a
 * second refund; the same key with other parameters is refused; every failure is a
 * {@link GatewayException} whose {@link GatewayException#outcome() outcome} says what it means for
 * the money (a timeout is {@link GatewayException.Outcome#UNKNOWN}, never a refusal). The fence does
 * not see these calls: they are safe only as far as the provider honours the key. Thread-safe.
 */
public interface RefundGateway {

    /**
     * Creates a refund, or returns the one already created under {@code idempotencyKey} with the
     * same parameters.
     *
     * @throws GatewayException classified by its outcome
     */
    GatewayRefund createRefund(String idempotencyKey, String reference, String merchant, BigDecimal amount, String currency);

    /**
     * {@link #createRefund(String, String, String, BigDecimal, String)} with {@code metadata} kept on
     * the refund and returned by every lookup (a provider's {@code metadata}). The settlement worker
     * names each refund's owner there, and refuses a refund under its row's key that another owner
     * made. This default drops the metadata: override it, or a refund another deployment made
     * under the same key cannot be told from the row's own.
     *
     * @throws GatewayException classified by its outcome
     */
    default GatewayRefund createRefund(String idempotencyKey, String reference, String merchant, BigDecimal amount, String currency,
                                       Map<String, String> metadata) {
        return createRefund(idempotencyKey, reference, merchant, amount, currency);
    }

    /** The refund created under {@code idempotencyKey}, if any. */
    Optional<GatewayRefund> findByKey(String idempotencyKey);

    /** Every refund made for {@code merchant}, in creation order. */
    List<GatewayRefund> refundsOf(String merchant);
}
