package dev.fenced.gateway;

import dev.fenced.provider.GatewayRefund;
import java.time.Clock;
import java.util.SplittableRandom;

/**
 * The status the simulated gateway reports for a refund, derived from its age on the gateway's
 * clock: {@code pending} until {@link GatewayConfig#settleAfter()}, then {@code succeeded}, or
 * {@code failed} for a share {@link GatewayConfig#failLate()} drawn from the refund's id and the
 * seed, so that every lookup, before and after a restart, tells the same story. A refund of a
 * charge made with Stripe's refund-failing test card ({@link StripeEndpoint}) succeeds as the
 * others do and fails {@link #failsAfterSuccess(GatewayRefund) later}, as Stripe's card refunds
 * can: {@code succeeded} is not the last word there. Stateless.
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

    /** How long after it succeeded a refund on the refund-failing card fails: the settle time, at least a second. */
    private static final long MIN_FAIL_AFTER_SUCCESS_MILLIS = 1000;

    GatewayRefund current(GatewayRefund refund) {
        long now = clock.millis();
        if (now < settlesAt(refund)) {
            return refund.withStatus(GatewayRefund.PENDING, null);
        }
        GatewayRefund settled = settled(refund);
        if (GatewayRefund.SUCCEEDED.equals(settled.status()) && failsAfterSuccess(refund) && now >= failsAt(refund)) {
            return failedAfterSuccess(refund);
        }
        return settled;
    }

    /** Whether the refund succeeds first and fails later (a charge on Stripe's refund-failing test card). */
    static boolean failsAfterSuccess(GatewayRefund refund) {
        return refund.metadata().containsKey(StripeEndpoint.FAILS_AFTER_SUCCESS_KEY);
    }

    /** When a refund that {@link #failsAfterSuccess fails after success} fails, on the gateway's clock. */
    long failsAt(GatewayRefund refund) {
        return settlesAt(refund) + Math.max(settleAfterMillis, MIN_FAIL_AFTER_SUCCESS_MILLIS);
    }

    /** The refund as it is once it failed after success: the money came back to the merchant. */
    static GatewayRefund failedAfterSuccess(GatewayRefund refund) {
        return refund.withStatus(GatewayRefund.FAILED, LATE_FAILURE_REASON);
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
