package dev.fenced.lab;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

/**
 * What a chaos run does: how much work, how many worker processes, how long faults strike and
 * which, drawn from a schedule seeded with {@code seed} (the same seed draws the same faults at
 * the same moments; what they hit still depends on timing).
 *
 * @param concurrency refunds in flight per worker
 * @param duration how long faults strike before the drain
 * @param fencing false for the negative control
 * @param dbTokens tokens from the database counter table instead of Redis
 * @param history where to write every worker event as JSON lines, or null
 */
record ChaosSettings(int merchants, int refunds, int workers, int concurrency, Duration gatewayLatency, Duration duration,
                     Duration ttl, long seed, Set<Fault> faults, boolean fencing, boolean dbTokens, Path history) {
}
