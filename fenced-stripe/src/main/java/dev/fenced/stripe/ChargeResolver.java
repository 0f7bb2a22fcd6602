package dev.fenced.stripe;

/**
 * Which Stripe charge or payment intent a refund row refunds: Stripe refunds either, and a refund
 * row knows its merchant and its id. Typically a lookup in the application's own orders.
 * Called for every refund request and lookup; must be thread-safe, and must give the same charge
 * for the same row every time (a lookup searches that charge's refunds).
 */
@FunctionalInterface
public interface ChargeResolver {
    /**
     * The charge ({@code ch_...}) or payment intent ({@code pi_...}) that {@code reference} of
     * {@code merchant} refunds: the adapter refunds, and lists the refunds of, whichever it names.
     */
    String chargeOf(String merchant, String reference);
}
