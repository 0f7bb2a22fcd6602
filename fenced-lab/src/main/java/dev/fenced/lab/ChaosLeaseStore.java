package dev.fenced.lab;

import dev.fenced.cli.LeaseBackend;
import dev.fenced.embedded.EmbeddedEtcd;
import dev.fenced.embedded.EmbeddedRedisCluster;
import dev.fenced.embedded.EmbeddedRedisFailoverGroup;
import dev.fenced.embedded.ReplicatedRedis;
import java.util.HashMap;
import java.util.Map;

/**
 * The lease store a chaos run breaks: a Redis primary, replica and Sentinel (a Cluster with
 * {@link Fault#CLUSTER_FAILOVER}), nothing of its own when the leases are in the run's database, or
 * a three-member etcd. Exactly one of {@link #redis} and {@link #etcd} is set, or neither.
 */
final class ChaosLeaseStore implements AutoCloseable {
    final LeaseBackend backend;
    final ReplicatedRedis redis;
    final EmbeddedEtcd etcd;

    private ChaosLeaseStore(LeaseBackend backend, ReplicatedRedis redis, EmbeddedEtcd etcd) {
        this.backend = backend;
        this.redis = redis;
        this.etcd = etcd;
    }

    static ChaosLeaseStore start(ChaosSettings settings) {
        return switch (settings.leases()) {
            case REDIS -> new ChaosLeaseStore(LeaseBackend.REDIS,
                    Fault.onCluster(settings.faults()) ? EmbeddedRedisCluster.start() : EmbeddedRedisFailoverGroup.start(), null);
            case DATABASE -> new ChaosLeaseStore(LeaseBackend.DATABASE, null, null);
            case ETCD -> new ChaosLeaseStore(LeaseBackend.ETCD, null, EmbeddedEtcd.start(3));
        };
    }

    /** What the workers need in their environment to reach it. */
    Map<String, String> environment() {
        Map<String, String> env = new HashMap<>(Map.of("FENCED_LEASES", backend.setting()));
        if (redis != null) {
            env.put("FENCED_REDIS_URL", redis.uri());
        }
        if (etcd != null) {
            env.put("FENCED_ETCD_URL", etcd.endpoints());
        }
        return env;
    }

    /** For the run's opening line. */
    String describe() {
        return switch (backend) {
            case REDIS -> "Redis: " + (redis instanceof EmbeddedRedisCluster ? "a Cluster of 3 primaries and 3 replicas"
                    : "a primary, a replica and a Sentinel");
            case DATABASE -> "leases in the database (no Redis)";
            case ETCD -> "leases in a three-member etcd (no Redis)";
        };
    }

    @Override
    public void close() {
        if (redis != null) {
            redis.close();
        }
        if (etcd != null) {
            etcd.close();
        }
    }
}
