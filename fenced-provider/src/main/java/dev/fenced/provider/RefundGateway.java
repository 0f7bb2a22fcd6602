package dev.fenced.provider;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A payment provider as the settlement worker and reconciliation see it: a refund is created under
 * an idempotency key, and looked up by that key. {@code GatewayClient} (fenced-gateway) implements it for the
 * simulated gateway; an application implements it for its own provider.
 *
 * <p>What an implementation must guarantee: the same key with the same parameters never makes a
 * second refund; the same key with other parameters is refused; every failure is a
 * {@link GatewayException} whose {@link GatewayException#outcome() outcome} says what it means for
 * the money (a timeout is {@link GatewayException.Outcome#UNKNOWN}, never a refusal). The fence does
 * not see these calls: they are safe only as far as the provider honours the key, and a provider
 * keeps a key for a limited time only (Stripe: 24 hours): past it, {@link #findByKey} finds nothing
 * and a request under the same key makes a second refund. {@link #findByReference} is the lookup
 * that does not depend on the key. Thread-safe.
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

    /** The refund created under {@code idempotencyKey}, if any, while the provider still keeps the key. */
    Optional<GatewayRefund> findByKey(String idempotencyKey);

    /**
     * The refund created under {@code idempotencyKey} for {@code reference} of {@code merchant}: what
     * the settlement worker and reconciliation ask, with all they know of the row, so that a provider
     * without a lookup by key (Stripe) can search where the refund would be (the charge's refunds)
     * and match the key it sent as metadata. This default asks {@link #findByKey(String)}.
     */
    default Optional<GatewayRefund> findByKey(String merchant, String reference, String idempotencyKey) {
        return findByKey(idempotencyKey);
    }

    /**
     * The refunds made for {@code reference} (the caller's id for the refund, sent with it) of
     * {@code merchant}, in creation order, however old: the provider's own lookup, which holds after
     * the key is forgotten (with Stripe, list the charge's refunds and match the metadata sent). This
     * default filters {@link #refundsOf}; a provider that can ask by reference should.
     */
    default List<GatewayRefund> findByReference(String merchant, String reference) {
        return refundsOf(merchant).stream().filter(refund -> reference.equals(refund.reference())).toList();
    }

    /**
     * The refund the provider made with id {@code refundId} for {@code merchant}, with its status
     * now ({@link GatewayRefund#status()}): how rows learn the provider's final word when no news
     * came. This default searches {@link #refundsOf}; a provider that reads one refund by id should.
     */
    default Optional<GatewayRefund> refundById(String merchant, String refundId) {
        return refundsOf(merchant).stream().filter(refund -> refundId.equals(refund.id())).findFirst();
    }

    /**
     * How long one call may take at most, when the implementation bounds its calls: with it the
     * settlement worker refuses a configuration whose retries of one refund could outlive the
     * provider's key retention. Empty (this default) when it does not say.
     */
    default Optional<Duration> callTimeout() {
        return Optional.empty();
    }

    /** Every refund made for {@code merchant}, in creation order. */
    List<GatewayRefund> refundsOf(String merchant);
}
