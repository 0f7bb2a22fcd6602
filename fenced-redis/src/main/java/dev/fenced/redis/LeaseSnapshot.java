package dev.fenced.redis;

import java.time.Duration;

/**
 * What Redis held for a resource at one instant: for display and diagnosis only, never for a
 * decision to write (it may be stale by the time it is read).
 *
 * @param holder the owner id of the live lease, or null when none is live
 * @param timeLeft the live lease's remaining TTL, zero when none is live
 * @param counter the fence counter, or null when it is missing
 * @param tokenIssuer who issues the resource's tokens as Redis recorded it ({@link TokenIssuer#recorded()}),
 *     or null when nothing is recorded (never acquired, acquired before issuers were recorded, or lost)
 * @param highestTokenIssued the highest token the recorded issuer may have handed out, as far as Redis
 *     can tell: the counter for Redis's own, {@code epoch << 24 | counter} for epochs, 0 for a durable
 *     source (its sequence knows, Redis does not) or when Redis holds nothing
 */
public record LeaseSnapshot(String resource, String holder, Duration timeLeft, Long counter, String tokenIssuer, long highestTokenIssued) {
    /** A snapshot with no issuer recorded: the counter is the highest token issued. */
    public LeaseSnapshot(String resource, String holder, Duration timeLeft, Long counter) {
        this(resource, holder, timeLeft, counter, null, counter == null ? 0 : counter);
    }
}
