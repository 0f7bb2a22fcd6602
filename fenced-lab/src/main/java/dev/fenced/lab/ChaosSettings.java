package dev.fenced.lab;

import dev.fenced.cli.LeaseBackend;
import dev.fenced.redis.TokenIssuer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

/**
 * What a chaos run does: how much work, how many worker processes, how long faults strike and
 * which, drawn from a schedule seeded with {@code seed} (the same seed draws the same faults at
 * the same moments; what they hit still depends on timing).
 *
 * @param jobs jobs each worker settles at once (its {@code --jobs})
 * @param concurrency refunds in flight per job
 * @param duration how long faults strike before the drain
 * @param fencing false for the negative control
 * @param tokens who issues the tokens, as {@code fenced worker --tokens} says
 * @param history where to write every worker event as JSON lines, or null
 * @param natsUrl the NATS with JetStream to use, or null for a {@code nats-server} of the run's own;
 *     ignored with {@link Fault#NATS_RESTART}, which needs a server the run can restart, and with
 *     the {@link Fault#PARTITIONS}, whose workers reach only the machine's loopback
 * @param leases where the leases live: a Redis group, the database, a three-member etcd; with the
 *     last two, {@code tokens} is not used (the store issues its own)
 * @param keepBusy seed and publish another round of merchants whenever every refund is settled
 *     before the faults end, so that a long run's faults meet work all along
 * @param trustKeys the negative control of {@link Fault#KEY_EXPIRY}: the workers are told the
 *     gateway keeps keys a day (the default), not the run's {@link ChaosGateway#KEY_RETENTION}
 * @param asyncReplication the negative control of {@link Fault#DB_FAILOVER}: the database's replica
 *     streams asynchronously, so a promoted replica can lack what the old primary acknowledged
 */
record ChaosSettings(int merchants, int refunds, int workers, int jobs, int concurrency, Duration gatewayLatency, Duration duration,
                     Duration ttl, long seed, Set<Fault> faults, boolean fencing, TokenIssuer tokens, Path history,
                     String natsUrl, LeaseBackend leases, boolean trustKeys, boolean keepBusy, boolean asyncReplication) {

    /**
     * False for a negative control: fencing off, workers that trust the gateway's keys past its
     * retention, or a database failover onto a replica that streamed asynchronously.
     */
    boolean safe() {
        return fencing && !trustKeys && !(asyncReplication && faults.contains(Fault.DB_FAILOVER));
    }

    /** Where the tokens came from, as the report says it: the issuer with Redis's leases, the store otherwise. */
    String tokenSource() {
        return leases == LeaseBackend.REDIS ? tokens.setting() : leases.setting() + " (its own leases)";
    }

    /** A job's visibility timeout on the run's stream: one TTL (at least JetStream's 500 ms), as a paused holder's lease lasts. */
    Duration ackWait() {
        return ttl.compareTo(Duration.ofMillis(500)) < 0 ? Duration.ofMillis(500) : ttl;
    }

    /** True when the run starts a {@code nats-server} of its own rather than use {@link #natsUrl()}. */
    boolean ownsBroker() {
        return natsUrl == null || natsUrl.isBlank() || faults.contains(Fault.NATS_RESTART) || Fault.partitioned(faults);
    }
}
