package dev.fenced.lab;

import dev.fenced.cli.LeaseBackend;
import dev.fenced.embedded.EmbeddedEtcd;
import dev.fenced.embedded.EmbeddedRedisCluster;
import dev.fenced.embedded.EmbeddedRedisFailoverGroup;
import dev.fenced.embedded.MovableClockRedis;
import dev.fenced.embedded.ReplicatedRedis;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The lease store a chaos run breaks: a Redis primary, replica and Sentinel (a Cluster with
 * {@link Fault#CLUSTER_FAILOVER}, one server under libfaketime with {@link Fault#CLOCK_JUMP}),
 * nothing of its own when the leases are in the run's database, or a three-member etcd. At most one
 * of {@link #redis}, {@link #clockRedis} and {@link #etcd} is set.
 */
final class ChaosLeaseStore implements AutoCloseable {
    final LeaseBackend backend;
    final ReplicatedRedis redis;
    final MovableClockRedis clockRedis;
    final EmbeddedEtcd etcd;
    /** Where the Redis under libfaketime keeps its wrapper script and clock offset; null without it. */
    private final Path clockDir;

    private ChaosLeaseStore(LeaseBackend backend, ReplicatedRedis redis, MovableClockRedis clockRedis, Path clockDir, EmbeddedEtcd etcd) {
        this.backend = backend;
        this.redis = redis;
        this.clockRedis = clockRedis;
        this.clockDir = clockDir;
        this.etcd = etcd;
    }

    static ChaosLeaseStore start(ChaosSettings settings) {
        return switch (settings.leases()) {
            case REDIS -> Fault.onMovableClock(settings.faults()) ? onMovableClock()
                    : new ChaosLeaseStore(LeaseBackend.REDIS,
                            Fault.onCluster(settings.faults()) ? EmbeddedRedisCluster.start() : EmbeddedRedisFailoverGroup.start(), null, null, null);
            case DATABASE -> new ChaosLeaseStore(LeaseBackend.DATABASE, null, null, null, null);
            case ETCD -> new ChaosLeaseStore(LeaseBackend.ETCD, null, null, null, EmbeddedEtcd.start(3));
        };
    }

    private static ChaosLeaseStore onMovableClock() {
        Path dir;
        try {
            dir = Files.createTempDirectory("fenced-chaos-clock");
        } catch (IOException e) {
            throw new UncheckedIOException("could not make a directory for the Redis under libfaketime", e);
        }
        try {
            return new ChaosLeaseStore(LeaseBackend.REDIS, null, MovableClockRedis.start(dir), dir, null);
        } catch (RuntimeException e) {
            deleteQuietly(dir);
            throw e;
        }
    }

    /** What the workers need in their environment to reach it. */
    Map<String, String> environment() {
        Map<String, String> env = new HashMap<>(Map.of("FENCED_LEASES", backend.setting()));
        if (redis != null) {
            env.put("FENCED_REDIS_URL", redis.uri());
        }
        if (clockRedis != null) {
            env.put("FENCED_REDIS_URL", clockRedis.uri());
        }
        if (etcd != null) {
            env.put("FENCED_ETCD_URL", etcd.endpoints());
        }
        return env;
    }

    /** The ports of the run's Redis, every node and Sentinel: what a partition from Redis cuts. Empty without Redis. */
    Set<Integer> redisPorts() {
        Set<Integer> ports = new TreeSet<>();
        if (redis instanceof EmbeddedRedisFailoverGroup group) {
            ports.addAll(group.dataPorts());
            ports.add(group.sentinelPort());
        } else if (redis instanceof EmbeddedRedisCluster cluster) {
            ports.addAll(cluster.ports());
        }
        if (clockRedis != null) {
            ports.add(java.net.URI.create(clockRedis.uri()).getPort());
        }
        return ports;
    }

    /** For the run's opening line. */
    String describe() {
        return switch (backend) {
            case REDIS -> "Redis: " + (clockRedis != null ? "one server under libfaketime, its clock moved by clock-jump"
                    : redis instanceof EmbeddedRedisCluster ? "a Cluster of 3 primaries and 3 replicas" : "a primary, a replica and a Sentinel");
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
        if (clockRedis != null) {
            try {
                clockRedis.close();
            } finally {
                deleteQuietly(clockDir);
            }
        }
    }

    private static void deleteQuietly(Path dir) {
        try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // a temporary directory: the system cleans it up
        }
    }
}
