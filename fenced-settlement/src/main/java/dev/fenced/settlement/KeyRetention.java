package dev.fenced.settlement;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * How long the provider keeps an idempotency key, and the margin the worker keeps from its end.
 * A row whose first claim is older than {@code retention - margin} may have a key the provider has
 * forgotten: a lookup by that key proves nothing and a request under it could make a second
 * refund, so such a row is looked up by the provider's own lookup ({@code findByReference}) and,
 * when that finds nothing, left for an operator, never sent again. The margin also bounds one
 * refund's retries: the worker refuses a configuration whose attempts could last longer
 * ({@link #requireRetriesFit}), so a send that starts inside the window ends inside the retention.
 *
 * @param clock the worker's clock, on which each row's first attempt is placed ({@link RefundRow#firstAttemptAt()})
 */
record KeyRetention(Duration retention, Duration margin, Clock clock) {
    /** Stripe's: keys are pruned once they are at least 24 hours old. */
    static final Duration DEFAULT_RETENTION = Duration.ofHours(24);
    static final Duration DEFAULT_MARGIN = Duration.ofHours(1);

    KeyRetention {
        if (retention == null || retention.isNegative() || retention.isZero()) {
            throw new IllegalArgumentException("key retention must be positive, got " + retention);
        }
        if (margin == null || margin.isNegative() || margin.isZero() || margin.compareTo(retention) >= 0) {
            throw new IllegalArgumentException("key retention margin must be positive and less than the key retention ("
                    + retention + "), got " + margin);
        }
    }

    /** Whether the row's key may be forgotten by now, or will be before a send that starts now ends. */
    boolean outlived(RefundRow row) {
        Instant first = row.firstAttemptAt();
        return first != null && !clock.instant().isBefore(first.plus(retention.minus(margin)));
    }

    /**
     * Refuses retries that could outlast the margin: {@code longestSend} is the most one refund's
     * attempts, backoffs and closing lookup can take.
     *
     * @throws IllegalArgumentException naming both durations
     */
    void requireRetriesFit(Duration longestSend, String how) {
        if (longestSend.compareTo(margin) >= 0) {
            throw new IllegalArgumentException("one refund's gateway calls may take up to " + longestSend + " (" + how
                    + "), not less than the key retention margin " + margin + ": a retry could reach the provider after it forgot"
                    + " the key (retention " + retention + ") and make a second refund; lower the attempts or the gateway timeout,"
                    + " or raise the margin");
        }
    }
}
