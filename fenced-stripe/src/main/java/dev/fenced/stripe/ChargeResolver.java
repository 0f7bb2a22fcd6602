package dev.fenced.stripe;

/**
 * Which Stripe charge a refund row refunds: Stripe refunds a charge (or a payment intent), and a
 * refund row knows its merchant and its id. Typically a lookup in the application's own orders.
 * Called for every refund request and lookup; must be thread-safe, and must give the same charge
 * for the same row every time (a lookup searches that charge's refunds).
 */
@FunctionalInterface
public interface ChargeResolver {
    /** The charge id ({@code ch_...}) that {@code reference} of {@code merchant} refunds. */
    String chargeOf(String merchant, String reference);
}
