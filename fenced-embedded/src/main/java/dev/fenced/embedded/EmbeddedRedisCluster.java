package dev.fenced.embedded;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import redis.embedded.RedisServer;

/**
 * A Redis Cluster of 3 primaries and 3 replicas on loopback: six real {@code redis-server}
 * processes (the embedded binaries) with {@code cluster-enabled yes}, joined and given their slots
 * by this class with CLUSTER MEET, ADDSLOTS and REPLICATE, so no {@code redis-cli} is needed. A
 * primary that stops is replaced by its replica after the node timeout (1 s).
 */
public final class EmbeddedRedisCluster implements ReplicatedRedis {
    private static final int SLOTS = 16_384;
    private final List<Integer> ports = new ArrayList<>();
    private final List<RedisServer> servers = new ArrayList<>();
    private final java.util.Map<Integer, Long> frozen = new java.util.concurrent.ConcurrentHashMap<>();
    private final Path dir;

    private EmbeddedRedisCluster() throws IOException {
        dir = Files.createTempDirectory("fenced-cluster-");
        for (int i = 0; i < 6; i++) {
            int port = freeClusterPort();
            ports.add(port);
            servers.add(start(port));
        }
    }

    /** Starts the six nodes and waits until the cluster says {@code cluster_state:ok} on every node. */
    public static EmbeddedRedisCluster start() {
        try {
            EmbeddedRedisCluster cluster = new EmbeddedRedisCluster();
            cluster.join();
            return cluster;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** {@code redis-cluster://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3}: the primaries as seeds. */
    @Override
    public String uri() {
        return "redis-cluster://127.0.0.1:" + ports.get(0) + ",127.0.0.1:" + ports.get(1) + ",127.0.0.1:" + ports.get(2);
    }

    public List<Integer> ports() {
        return List.copyOf(ports);
    }

    /** The port of the node that serves {@code slot} as primary now. */
    public int primaryOf(int slot) {
        for (int port : ports) {
            if (!servers.get(ports.indexOf(port)).isActive()) {
                continue;
            }
            try (RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
                 StatefulRedisConnection<String, String> connection = client.connect()) {
                for (Object range : connection.sync().clusterSlots()) {
                    List<?> entry = (List<?>) range;
                    if (((Number) entry.get(0)).intValue() <= slot && slot <= ((Number) entry.get(1)).intValue()) {
                        return ((Number) ((List<?>) entry.get(2)).get(1)).intValue();
                    }
                }
            }
        }
        throw new IllegalStateException("no live node serves slot " + slot);
    }

    /** Kills the node on {@code port}; nothing is persisted. */
    @Override
    public void stopNode(int port) {
        try {
            servers.get(ports.indexOf(port)).stop();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts the node on {@code port} again, empty, with its cluster config: it rejoins as a replica of the node that took its slots. */
    @Override
    public void startNode(int port) {
        try {
            servers.set(ports.indexOf(port), start(port));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The live nodes that are primaries now, in port order of the cluster's creation. */
    @Override
    public List<Integer> primaries() {
        return ports.stream().filter(port -> servers.get(ports.indexOf(port)).isActive() && RedisNode.isPrimary(port)).toList();
    }

    @Override
    public boolean laggingReplica(int replicaPort, int primaryPort) {
        long pid = RedisNode.freezeBehind(replicaPort, primaryPort);
        if (pid == 0) {
            return false;
        }
        frozen.put(replicaPort, pid);
        return true;
    }

    @Override
    public void thawNode(int port) {
        Long pid = frozen.remove(port);
        if (pid == null) {
            throw new IllegalStateException("no frozen node on port " + port);
        }
        RedisNode.signal("-CONT", pid);
    }

    private void join() throws InterruptedException {
        List<RedisClient> clients = new ArrayList<>();
        List<RedisCommands<String, String>> nodes = new ArrayList<>();
        try {
            for (int port : ports) {
                RedisClient client = RedisClient.create(RedisURI.builder().withHost("127.0.0.1").withPort(port)
                        .withTimeout(Duration.ofSeconds(10)).build());
                clients.add(client);
                nodes.add(client.connect().sync());
            }
            for (int i = 0; i < 3; i++) {
                int from = i * SLOTS / 3;
                int to = (i + 1) * SLOTS / 3;
                nodes.get(i).clusterAddSlots(IntStream.range(from, to).toArray());
            }
            for (int i = 1; i < ports.size(); i++) {
                nodes.get(0).clusterMeet("127.0.0.1", ports.get(i));
            }
            for (int i = 0; i < 3; i++) {
                String primaryId = nodes.get(i).clusterMyId();
                RedisCommands<String, String> replica = nodes.get(i + 3);
                await(() -> replica.clusterNodes().contains(primaryId), "replica " + ports.get(i + 3) + " to see its primary");
                replica.clusterReplicate(primaryId);
            }
            for (RedisCommands<String, String> node : nodes) {
                await(() -> node.clusterInfo().contains("cluster_state:ok") && node.clusterNodes().lines().count() == 6,
                        "the cluster to be ok on every node");
            }
            for (int i = 3; i < 6; i++) {
                RedisCommands<String, String> replica = nodes.get(i);
                await(() -> replica.info("replication").contains("master_link_status:up"), "replica " + ports.get(i) + " to sync");
            }
        } finally {
            clients.forEach(RedisClient::shutdown);
        }
    }

    private static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out waiting for " + what);
            }
            Thread.sleep(50);
        }
    }

    private RedisServer start(int port) throws IOException {
        RedisServer server = RedisServer.newRedisServer().port(port).bind("127.0.0.1")
                .setting("save \"\"").setting("appendonly no")
                .setting("cluster-enabled yes")
                .setting("cluster-config-file nodes-" + port + ".conf")
                .setting("cluster-node-timeout 1000")
                .setting("dir " + dir)
                .onShutdownForceStop(true).build();
        EmbeddedRedis.startBusyProof(server);
        return server;
    }

    /** A free port whose cluster bus port (+10000) is free too, both below the ephemeral range where the kernel allows. */
    private static int freeClusterPort() throws IOException {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = LocalProcesses.freePortUpTo(LocalProcesses.ephemeralRangeStart() - 1 - 10_000);
            if (port + 10_000 > 65_535) {
                continue;
            }
            try (ServerSocket bus = new ServerSocket(port + 10_000)) {
                return port;
            } catch (IOException taken) {
                // try another
            }
        }
        throw new IOException("no free port pair for a cluster node");
    }

    @Override
    public void close() {
        for (RedisServer server : servers) {
            try {
                server.stop();
            } catch (IOException ignored) {
                // stopping anyway
            }
        }
    }
}
