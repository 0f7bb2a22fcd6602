package dev.fenced.embedded;

import java.util.List;

/**
 * Redis with replicas, of real {@code redis-server} processes, that tests and the chaos run break
 * the same way whatever the deployment: {@link EmbeddedRedisFailoverGroup} (one primary behind a
 * Sentinel) or {@link EmbeddedRedisCluster} (three primaries, each with a replica).
 */
public interface ReplicatedRedis extends AutoCloseable {

    /** What clients connect to: {@code redis-sentinel://...} or {@code redis-cluster://...}. */
    String uri();

    /** The nodes that are primaries now. */
    List<Integer> primaries();

    /** The port of a replica in sync with the primary on {@code primaryPort}, or -1 when it has none online. */
    default int replicaOf(int primaryPort) {
        return RedisNode.replicaOf(primaryPort);
    }

    /** Kills the node on {@code port}; nothing is persisted. */
    void stopNode(int port);

    /** Starts the node on {@code port} again, empty; it comes back as a replica. */
    void startNode(int port);

    /**
     * Stops and starts the primary on {@code port} before anything fails over: a restart without
     * persistence, no more. Where a failover could race the restart (a Sentinel that finds the
     * primary down while it restarts), it is held off meanwhile: a failover during the restart
     * would leave two primaries at once, the restarted empty one and the promoted replica, each
     * serving the clients connected to it, which is a split brain and not a restart.
     */
    default void restartPrimary(int port) {
        stopNode(port);
        startNode(port);
    }

    /**
     * Makes the replica on {@code replicaPort} fall behind the primary on {@code primaryPort} and
     * stay there: freezes it (SIGSTOP), then has the primary drop the replication link (CLIENT KILL
     * TYPE replica), so what the primary is written from now on reaches no replica. Freezing alone
     * would not do: the primary's writes would wait in the socket and be applied on thawing. Killing
     * the primary before {@link #thawNode} loses those writes, as a failover to a lagging replica does.
     *
     * @return false, with nothing changed, when the primary had no replica link to drop
     */
    boolean laggingReplica(int replicaPort, int primaryPort);

    /** Thaws a node frozen by {@link #laggingReplica} (SIGCONT). */
    void thawNode(int port);

    @Override
    void close();
}
