package dev.fenced.redis;

import java.time.Duration;

/**
 * What Redis held for a resource at one instant: for display and diagnosis only, never for a
 * decision to write (it may be stale by the time it is read).
 *
 * @param holder the owner id of the live lease, or null when none is live
 * @param timeLeft the live lease's remaining TTL, zero when none is live
 * @param counter the fence counter, or null when it is missing
 */
public record LeaseSnapshot(String resource, String holder, Duration timeLeft, Long counter) {
}
