package dev.fenced.settlement;

import dev.fenced.provider.GatewayException;
import dev.fenced.provider.GatewayRefund;

/**
 * What the gateway's answers about one refund came to, after retries: the only input from which
 * the worker changes a row's state.
 *
 * <ul>
 *   <li>{@link Kind#SUCCEEDED}: the gateway holds a refund under the row's key with the row's
 *       merchant, amount and currency, and no other owner ({@link RefundOwner}): confirm it.
 *   <li>{@link Kind#ABSENT}: a lookup answered that no refund exists under the key.
 *   <li>{@link Kind#REJECTED}: a definitive refusal, or a refund that does not match the row: the
 *       only answer that marks a row failed, with {@link #reason()}.
 *   <li>{@link Kind#UNKNOWN}: the refund may exist: the row stays {@code sending} for a lookup.
 *   <li>{@link Kind#UNAVAILABLE}: no request was processed: the row can go back to {@code pending}.
 *       With {@code credentialsRefused}, none will be until the configuration is fixed.
 * </ul>
 */
record GatewayAnswer(Kind kind, GatewayRefund refund, String reason, boolean credentialsRefused) {
    enum Kind { SUCCEEDED, ABSENT, REJECTED, UNKNOWN, UNAVAILABLE }

    GatewayAnswer(Kind kind, GatewayRefund refund, String reason) {
        this(kind, refund, reason, false);
    }

    /** A refund found or created for {@code row}: succeeded when it matches the row, rejected when not. */
    static GatewayAnswer of(RefundRow row, GatewayRefund refund) {
        String mismatch = mismatch(row, refund);
        return mismatch == null ? new GatewayAnswer(Kind.SUCCEEDED, refund, null) : new GatewayAnswer(Kind.REJECTED, refund, mismatch);
    }

    static GatewayAnswer absent() {
        return new GatewayAnswer(Kind.ABSENT, null, "no refund under the key");
    }

    static GatewayAnswer failed(GatewayException e) {
        Kind kind = switch (e.outcome()) {
            case REJECTED -> Kind.REJECTED;
            case UNKNOWN -> Kind.UNKNOWN;
            case UNAVAILABLE -> Kind.UNAVAILABLE;
        };
        return new GatewayAnswer(kind, null, e.getMessage(), e.credentialsRefused());
    }

    /** Whether the gateway itself answered (for the worker's count of gateway failures in a row). */
    boolean gatewayAnswered() {
        return kind != Kind.UNKNOWN && kind != Kind.UNAVAILABLE;
    }

    private static String mismatch(RefundRow row, GatewayRefund refund) {
        String foreign = row.owner().disowns(refund);
        if (foreign != null) {
            return foreign;
        }
        boolean same = row.idempotencyKey().equals(refund.idempotencyKey()) && row.merchant().equals(refund.merchant())
                && row.amount().compareTo(refund.amount()) == 0 && row.currency().equals(refund.currency());
        return same ? null : "gateway refund " + refund.id() + " under key " + refund.idempotencyKey() + " is for "
                + refund.merchant() + " " + refund.amount().toPlainString() + " " + refund.currency() + "; the row is "
                + row.merchant() + " " + row.amount().toPlainString() + " " + row.currency();
    }
}
