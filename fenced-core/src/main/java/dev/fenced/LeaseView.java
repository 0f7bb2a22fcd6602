package dev.fenced;

import java.time.Duration;

/**
 * What a lease store held for a resource at one instant, by the store's own clock: for status
 * pages and diagnosis only, never for a decision to write (it may be stale when it is read).
 *
 * @param holder the owner id of the live lease, or null when none is live
 * @param timeLeft the live lease's remaining time, zero when none is live
 * @param highestTokenIssued the highest token the store knows it issued for the resource, 0 when
 *     it knows of none
 */
public record LeaseView(String resource, String holder, Duration timeLeft, long highestTokenIssued) {
    public LeaseView {
        LeaseArguments.requireValidResource(resource);
        if (timeLeft == null || timeLeft.isNegative()) {
            throw new IllegalArgumentException("timeLeft must be zero or positive, got " + timeLeft);
        }
    }

    /** True when a lease was live. */
    public boolean held() {
        return holder != null;
    }
}
