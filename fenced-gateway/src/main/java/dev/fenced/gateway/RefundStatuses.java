package dev.fenced.gateway;

import java.time.Clock;
import java.util.SplittableRandom;

/**
 * The status the simulated gateway reports for a refund, derived from its age on the gateway's
 * clock: {@code pending} until {@link GatewayConfig#settleAfter()}, then {@code succeeded}, or
 * {@code failed} for a share {@link GatewayConfig#failLate()} drawn from the refund's id and the
 * seed, so that every lookup, before and after a restart, tells the same story. Stateless.
 */
final class RefundStatuses {
    /** Stripe's code for a refund to a card that can no longer take it. */
    static final String LATE_FAILURE_REASON = "expired_or_canceled_card";

    private final Clock clock;
    private final long settleAfterMillis;
    private final double failLate;
    private final long seed;

    RefundStatuses(GatewayConfig config) {
        this.clock = config.clock();
        this.settleAfterMillis = config.settleAfter().toMillis();
        this.failLate = config.failLate();
        this.seed = config.seed();
    }

    GatewayRefund current(GatewayRefund refund) {
        if (clock.millis() < settlesAt(refund)) {
            return refund.withStatus(GatewayRefund.PENDING, null);
        }
        return settled(refund);
    }

    /** When the refund's status becomes final, on the gateway's clock. */
    long settlesAt(GatewayRefund refund) {
        return refund.createdAt() + settleAfterMillis;
    }

    /** The refund with the final status it has, or will have, from {@link #settlesAt}. */
    GatewayRefund settled(GatewayRefund refund) {
        boolean fails = failLate > 0 && new SplittableRandom(seed * 31 + refund.id().hashCode()).nextDouble() < failLate;
        return fails ? refund.withStatus(GatewayRefund.FAILED, LATE_FAILURE_REASON) : refund.withStatus(GatewayRefund.SUCCEEDED, null);
    }
}
