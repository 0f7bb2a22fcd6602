package dev.fenced.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import redis.embedded.RedisSentinel;
import redis.embedded.RedisServer;

/**
 * A primary, a replica and one Sentinel, all real {@code redis-server} processes on loopback,
 * without persistence. Clients connect through the Sentinel ({@link #sentinelUri()}) and follow a
 * failover. Replication is asynchronous: a failover can lose the last writes, a lease among them.
 */
public final class EmbeddedRedisFailoverGroup implements ReplicatedRedis {
    public static final String MASTER_NAME = "fenced";
    private static final int DOWN_AFTER_MS = 1_000;
    /** Longer than any restart takes on a loaded machine. */
    private static final int HELD_DOWN_AFTER_MS = 60_000;

    private final int[] ports = {EmbeddedRedis.freePort(), EmbeddedRedis.freePort()};
    private final RedisServer[] servers = new RedisServer[2];
    private final long[] frozen = new long[2];
    private final int sentinelPort = EmbeddedRedis.freePort();
    private final RedisSentinel sentinel;

    private EmbeddedRedisFailoverGroup() {
        servers[0] = start(ports[0], null);
        servers[1] = start(ports[1], ports[0]);
        sentinel = RedisSentinel.newRedisSentinel()
                .bind("127.0.0.1")
                .port(sentinelPort)
                .masterName(MASTER_NAME)
                .masterPort(ports[0])
                .quorumSize(1)
                .downAfterMilliseconds(DOWN_AFTER_MS)
                .failOverTimeout(3_000)
                .parallelSyncs(1)
                .onShutdownForceStop(true)
                .build();
        try {
            EmbeddedRedis.startBusyProof(sentinel);
        } catch (IOException e) {
            close();
            throw new UncheckedIOException("could not start the embedded Sentinel", e);
        }
    }

    public static EmbeddedRedisFailoverGroup start() {
        return new EmbeddedRedisFailoverGroup();
    }

    /** {@code redis-sentinel://127.0.0.1:port#fenced}: a client that follows failovers. */
    public String sentinelUri() {
        return "redis-sentinel://127.0.0.1:" + sentinelPort + "#" + MASTER_NAME;
    }

    @Override
    public String uri() {
        return sentinelUri();
    }

    @Override
    public List<Integer> primaries() {
        return List.of(primaryPort());
    }

    public int sentinelPort() {
        return sentinelPort;
    }

    /** The port of the node the Sentinel names primary now. */
    public int primaryPort() {
        return Integer.parseInt(RedisNode.array(sentinelPort, "SENTINEL get-master-addr-by-name " + MASTER_NAME).get(1));
    }

    /** Both data nodes' ports; which one is primary changes with each failover. */
    public List<Integer> dataPorts() {
        return List.of(ports[0], ports[1]);
    }

    /** Stops the node on {@code port} (a crash, as far as its data goes: nothing is persisted). */
    @Override
    public void stopNode(int port) {
        int i = index(port);
        try {
            servers[i].stop();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Starts the node on {@code port} again, empty: as a replica of the primary the Sentinel names,
     * or as the primary when it still names this node (no failover happened). Started as a primary
     * after a failover, the node would be a second, empty primary until the Sentinel demotes it (8
     * to 18 s), and a client that looked the primary up before the failover and connected after a
     * pause would take leases on it: a split brain, which Redis's documentation tells operators of
     * nodes without persistence to avoid, and not the failover a test means. Call it once the
     * Sentinel has promoted the other node: until then it names this one. The Sentinel is asked once,
     * bounded by the 5 s read timeout of {@link RedisNode}; callers have already waited for the promotion.
     */
    @Override
    public void startNode(int port) {
        int i = index(port);
        int primary = primaryPort();
        servers[i] = start(port, primary == port ? null : primary);
    }

    /** The Sentinel's down-after is raised for the restart, so that it cannot fail over while the primary is away. */
    @Override
    public void restartPrimary(int port) {
        RedisNode.command(sentinelPort, "SENTINEL SET " + MASTER_NAME + " down-after-milliseconds " + HELD_DOWN_AFTER_MS);
        try {
            stopNode(port);
            servers[index(port)] = start(port, null); // the primary again, whatever the Sentinel says
            awaitSentinelSeesPrimaryUp();
        } finally {
            RedisNode.command(sentinelPort, "SENTINEL SET " + MASTER_NAME + " down-after-milliseconds " + DOWN_AFTER_MS);
        }
    }

    /**
     * Until the Sentinel has a PING answered by the restarted primary and none outstanding: put
     * back sooner, the ping left unanswered while it was down would already count as a second down.
     */
    private void awaitSentinelSeesPrimaryUp() {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            List<String> fields = RedisNode.array(sentinelPort, "SENTINEL master " + MASTER_NAME);
            java.util.Map<String, String> master = new java.util.HashMap<>();
            for (int i = 0; i + 1 < fields.size(); i += 2) {
                master.put(fields.get(i), fields.get(i + 1));
            }
            if ("master".equals(master.get("flags")) && "0".equals(master.get("last-ping-sent"))) {
                return;
            }
            try {
                Thread.sleep(50); // polling the Sentinel's view, bounded by the deadline above
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        throw new IllegalStateException("the Sentinel did not see the restarted primary up within 10 s");
    }

    @Override
    public boolean laggingReplica(int replicaPort, int primaryPort) {
        int replica = index(replicaPort);
        frozen[replica] = RedisNode.freezeBehind(replicaPort, primaryPort);
        return frozen[replica] != 0;
    }

    @Override
    public void thawNode(int port) {
        int i = index(port);
        if (frozen[i] == 0) {
            throw new IllegalStateException("no frozen node on port " + port);
        }
        RedisNode.signal("-CONT", frozen[i]);
        frozen[i] = 0;
    }

    private int index(int port) {
        if (port == ports[0]) {
            return 0;
        }
        if (port == ports[1]) {
            return 1;
        }
        throw new IllegalArgumentException("no node on port " + port);
    }

    private static RedisServer start(int port, Integer primaryPort) {
        try {
            var builder = RedisServer.newRedisServer().port(port).bind("127.0.0.1")
                    .setting("save \"\"").setting("appendonly no").onShutdownForceStop(true);
            if (primaryPort != null) {
                builder.slaveOf("127.0.0.1", primaryPort);
            }
            RedisServer server = builder.build();
            EmbeddedRedis.startBusyProof(server);
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start redis-server on port " + port, e);
        }
    }

    @Override
    public void close() {
        for (int i = 0; i < frozen.length; i++) {
            if (frozen[i] != 0) {
                RedisNode.signal("-CONT", frozen[i]); // a frozen process does not stop
                frozen[i] = 0;
            }
        }
        for (RedisServer server : servers) {
            try {
                if (server != null) {
                    server.stop();
                }
            } catch (IOException ignored) {
                // stopping anyway
            }
        }
        try {
            if (sentinel != null) {
                sentinel.stop();
            }
        } catch (IOException ignored) {
            // stopping anyway
        }
    }
}
