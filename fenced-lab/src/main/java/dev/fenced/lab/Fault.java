package dev.fenced.lab;

import dev.fenced.cli.LeaseBackend;
import dev.fenced.cli.UsageException;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A fault the chaos run can inject; {@link #label()} is its spelling on the command line
 * ({@code --faults pause,redis-restart}) and in the report. {@link #NATS_RESTART} restarts the
 * run's own {@code nats-server} on its file storage: it needs a server the run owns.
 * {@link #CLUSTER_FAILOVER} is the lagging failover of a Redis Cluster's primary: a run with it
 * runs on a Cluster, the others on a Sentinel group. {@link #STALLED_CLAIM} freezes a worker inside its
 * claim transaction, its rows locked, for longer than the next holder's lock wait may last.
 * {@link #KEY_EXPIRY} loses the gateway's answers for a second and its lookups until it has forgotten
 * those refunds' keys: it runs on its own, and only when named. {@link #CLOCK_JUMP} steps the clock
 * of the run's Redis forward (one server under libfaketime, so not with the Sentinel's or the
 * Cluster's faults) and publishes a second job for a merchant a worker holds: an early takeover
 * while the holder runs. The {@link #PARTITIONS} cut a worker's links, each worker in a network
 * namespace of its own ({@link WorkerNetworks}). {@link #DB_FAILOVER} crashes the primary of the run's
 * replicated PostgreSQL ({@link ChaosDatabase}) and promotes its replica.
 */
enum Fault {
    PAUSE, KILL, REDIS_RESTART, FLUSHALL, FAILOVER, LAGGING_FAILOVER, CLUSTER_FAILOVER, DB_KILL, GATEWAY, GATEWAY_OUTAGE,
    GATEWAY_RESTART, KEY_REUSE, NATS_RESTART, STALLED_CLAIM, ETCD_LEADER_KILL, PROVIDER_NEWS, KEY_EXPIRY, CLOCK_JUMP,
    PARTITION_REDIS, PARTITION_DB, PARTITION_GATEWAY, PARTITION_NATS, ISOLATE, DB_FAILOVER;

    /**
     * Faults that cut a worker's links silently ({@link WorkerNetworks}): one link, one way or both,
     * or all of them both ways ({@link #ISOLATE}). A run with any of them starts every worker in a
     * network namespace of its own, which needs root and nftables.
     */
    static final Set<Fault> PARTITIONS = EnumSet.of(PARTITION_REDIS, PARTITION_DB, PARTITION_GATEWAY, PARTITION_NATS, ISOLATE);

    /** Faults of a Redis behind a Sentinel; {@link #CLUSTER_FAILOVER} needs a Redis Cluster, so not in the same run. */
    static final Set<Fault> SENTINEL_ONLY = EnumSet.of(REDIS_RESTART, FLUSHALL, FAILOVER, LAGGING_FAILOVER);
    /** Faults of the run's Redis: only when the leases are in Redis. */
    static final Set<Fault> REDIS_ONLY = EnumSet.of(REDIS_RESTART, FLUSHALL, FAILOVER, LAGGING_FAILOVER, CLUSTER_FAILOVER, CLOCK_JUMP,
            PARTITION_REDIS);
    /** Faults of the run's three-member etcd: only when the leases are in etcd. */
    static final Set<Fault> ETCD_ONLY = EnumSet.of(ETCD_LEADER_KILL);

    /**
     * Every fault of one run when none are named: all but the Cluster's, {@link #CLOCK_JUMP}'s (its
     * Redis is one server under libfaketime), {@link #KEY_EXPIRY}, which stretches a run by the
     * gateway's key retention and runs alone, the {@link #PARTITIONS}, which need root, and
     * {@link #DB_FAILOVER}, whose database is a replicated pair.
     */
    static Set<Fault> allOnSentinel() {
        return allFor(LeaseBackend.REDIS);
    }

    /** Every fault that fits a run with its leases in {@code leases}: for Redis, all of a Sentinel group's. */
    static Set<Fault> allFor(LeaseBackend leases) {
        Set<Fault> all = EnumSet.allOf(Fault.class);
        all.remove(CLUSTER_FAILOVER);
        all.remove(KEY_EXPIRY);
        all.remove(CLOCK_JUMP);
        all.removeAll(PARTITIONS);
        all.remove(DB_FAILOVER);
        if (leases != LeaseBackend.REDIS) {
            all.removeAll(REDIS_ONLY);
        }
        if (leases != LeaseBackend.ETCD) {
            all.removeAll(ETCD_ONLY);
        }
        return all;
    }

    /** The named faults, each checked against where the run's leases are. */
    static Set<Fault> parse(List<String> names, LeaseBackend leases) {
        Set<Fault> out = parse(names);
        for (Fault fault : out) {
            if (leases != LeaseBackend.REDIS && REDIS_ONLY.contains(fault) || leases != LeaseBackend.ETCD && ETCD_ONLY.contains(fault)) {
                throw new UsageException(fault.label() + " strikes " + (ETCD_ONLY.contains(fault) ? "etcd" : "Redis")
                        + ": not with --leases " + leases.setting());
            }
        }
        return out;
    }

    /** Whether the run's Redis is a Cluster (3 primaries, 3 replicas) rather than a Sentinel group. */
    static boolean onCluster(Set<Fault> faults) {
        return faults.contains(CLUSTER_FAILOVER);
    }

    /** Whether the run's Redis is one server whose clock {@link #CLOCK_JUMP} moves, rather than a Sentinel group. */
    static boolean onMovableClock(Set<Fault> faults) {
        return faults.contains(CLOCK_JUMP);
    }

    /** Whether the run's workers each run in a network namespace of their own, for a partition fault. */
    static boolean partitioned(Set<Fault> faults) {
        return faults.stream().anyMatch(PARTITIONS::contains);
    }

    /** Faults that strike all along rather than at drawn moments. */
    boolean standing() {
        return this == GATEWAY || this == KEY_REUSE || this == PROVIDER_NEWS;
    }

    static Set<Fault> parse(List<String> names) {
        Set<Fault> out = EnumSet.noneOf(Fault.class);
        parseInto(names, out);
        if (out.contains(KEY_EXPIRY) && out.size() > 1) {
            // A worker stopped between its claim and its request leaves a row that no lookup can settle once its key is
            // forgotten: it is for an operator (fenced reconcile), and this run's checker would count it as unsent.
            throw new UsageException("key-expiry runs on its own: a fault that stops a worker after a claim would leave rows for an"
                    + " operator once their keys are forgotten");
        }
        if (onMovableClock(out) && (onCluster(out) || out.stream().anyMatch(SENTINEL_ONLY::contains))) {
            throw new UsageException("clock-jump runs on one Redis under libfaketime: not with redis-restart, flushall, failover,"
                    + " lagging-failover or cluster-failover");
        }
        if (onCluster(out) && out.stream().anyMatch(SENTINEL_ONLY::contains)) {
            throw new UsageException("cluster-failover runs on a Redis Cluster and redis-restart, flushall, failover and lagging-failover"
                    + " on a Sentinel group: not in one run");
        }
        return out;
    }

    private static void parseInto(List<String> names, Set<Fault> out) {
        for (String name : names) {
            try {
                out.add(Fault.valueOf(name.trim().toUpperCase(Locale.ROOT).replace('-', '_')));
            } catch (IllegalArgumentException e) {
                throw new UsageException("unknown fault '" + name + "'; use pause, kill, redis-restart, flushall, failover, lagging-failover,"
                        + " cluster-failover, db-kill, gateway, gateway-outage, gateway-restart, key-reuse, nats-restart, stalled-claim,"
                        + " etcd-leader-kill, provider-news, key-expiry, clock-jump, partition-redis, partition-db, partition-gateway,"
                        + " partition-nats, isolate, db-failover");
            }
        }
    }

    String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
