package dev.fenced.settlement;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * How long the provider keeps an idempotency key, and the margin the worker keeps from its end.
 * A row whose first claim is older than {@code retention - margin} may have a key the provider has
 * forgotten: a lookup by that key proves nothing and a request under it could make a second
 * refund, so such a row is looked up by the provider's own lookup ({@code findByReference}) and,
 * when that finds nothing, left for an operator, never sent again. Retries of one refund stop at
 * the same deadline ({@link #sendDeadline}), and the worker refuses a configuration whose attempts
 * could last longer than the margin when its gateway says how long a call may take
 * ({@link #requireRetriesFit}).
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

    /**
     * Whether the row's key may be forgotten by now, or will be before a send that starts now ends.
     * False for a row without a first attempt: never claimed, or claimed before the first attempt
     * was recorded (its age unknown: {@link #ageUnknown}).
     */
    boolean outlived(RefundRow row) {
        Instant first = row.firstAttemptAt();
        return first != null && passed(first.plus(retention.minus(margin)));
    }

    /** A row in {@code sending} without a first attempt: claimed before V8 recorded it, or while V8 ran. */
    static boolean ageUnknown(RefundRow row) {
        return row.firstAttemptAt() == null && !row.pending();
    }

    /**
     * The last moment a request for the row may start under its key: its first attempt (now, for a
     * row never claimed before this run) plus the retention less the margin.
     */
    Instant sendDeadline(RefundRow row) {
        Instant first = row.firstAttemptAt() == null ? clock.instant() : row.firstAttemptAt();
        return first.plus(retention.minus(margin));
    }

    boolean passed(Instant deadline) {
        return !clock.instant().isBefore(deadline);
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
