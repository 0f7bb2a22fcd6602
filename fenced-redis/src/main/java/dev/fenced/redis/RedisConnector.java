package dev.fenced.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.resource.ClientResources;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Opens a store's own connection: checks the URL, sets the command timeout, fails fast. */
final class RedisConnector {
    private RedisConnector() {
    }

    /** A client, its one connection and that connection's commands; closing is the store's job. */
    record Opened(AbstractRedisClient client, StatefulConnection<String, String> connection, RedisClusterCommands<String, String> commands) {
    }

    /** Cluster URLs: {@code redis-cluster://[user:password@]host:port[,host:port...]}, {@code rediss-cluster://} for TLS. */
    static final String CLUSTER = "redis-cluster://";
    static final String CLUSTER_TLS = "rediss-cluster://";
    static final String SENTINEL = "redis-sentinel://";

    /**
     * @throws IllegalArgumentException for a malformed URL, naming it without its secrets
     * @throws dev.fenced.StoreUnavailableException when Redis cannot be reached or refuses the credentials
     */
    static Opened open(String uri, Duration commandTimeout, ClientResources resources, ClientOptions options, RedisTls tls,
                       CommandListener listener, RedisErrors errors) {
        boolean cluster = uri != null && (uri.startsWith(CLUSTER) || uri.startsWith(CLUSTER_TLS));
        List<RedisURI> seeds = cluster ? clusterSeeds(uri, errors.server()) : List.of(parse(uri, errors.server(), null));
        for (RedisURI seed : seeds) {
            seed.setTimeout(commandTimeout);
            if (tls != null) {
                if (!seed.isSsl()) {
                    throw new IllegalArgumentException("TLS settings need a rediss:// URL, got " + errors.server());
                }
                seed.setVerifyPeer(tls.verifyMode());
            }
        }
        if (tls != null) {
            ClientOptions.Builder withTls = options == null ? ClientOptions.builder() : options.mutate();
            options = withTls.sslOptions(tls.sslOptions()).build();
        }
        // The sync API waits at most the URI's timeout for each command. Lettuce's TimeoutOptions
        // would add a timer task per command on top: CPU on every acquire for nothing this client uses.
        // Resources passed in are the caller's: shutting this client down leaves them running.
        return cluster ? openCluster(seeds, resources, options, listener, errors)
                : openOne(seeds.get(0), resources, options, listener, errors);
    }

    private static Opened openOne(RedisURI redisUri, ClientResources resources, ClientOptions options, CommandListener listener,
                                  RedisErrors errors) {
        RedisClient client = resources == null ? RedisClient.create(redisUri) : RedisClient.create(resources, redisUri);
        if (options != null) {
            client.setOptions(options);
        }
        if (listener != null) {
            client.addListener(listener);
        }
        try {
            StatefulRedisConnection<String, String> connection = client.connect();
            return new Opened(client, connection, connection.sync());
        } catch (RedisException e) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
            throw errors.unreachable(e);
        }
    }

    /**
     * A cluster client that follows the cluster as it changes: MOVED and ASK redirections, and a
     * topology refreshed on every redirection, on reconnects and every 10 s, so that a replica
     * promoted in a failover is found without a restart.
     */
    private static Opened openCluster(List<RedisURI> seeds, ClientResources resources, ClientOptions options, CommandListener listener,
                                      RedisErrors errors) {
        RedisClusterClient client = resources == null ? RedisClusterClient.create(seeds) : RedisClusterClient.create(resources, seeds);
        ClusterClientOptions.Builder clusterOptions = options instanceof ClusterClientOptions given ? given.mutate()
                : options == null ? ClusterClientOptions.builder() : ClusterClientOptions.builder(options);
        client.setOptions(clusterOptions.topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                .enableAllAdaptiveRefreshTriggers()
                .enablePeriodicRefresh(Duration.ofSeconds(10))
                .build()).build());
        if (listener != null) {
            client.addListener(listener);
        }
        try {
            StatefulRedisClusterConnection<String, String> connection = client.connect();
            return new Opened(client, connection, connection.sync());
        } catch (RedisException e) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
            throw errors.unreachable(e);
        }
    }

    /** Each {@code host:port} of a cluster URL as a URL of its own, with the user-info and TLS of the whole. */
    private static List<RedisURI> clusterSeeds(String uri, String redacted) {
        String clusterScheme = uri.startsWith(CLUSTER_TLS) ? CLUSTER_TLS : CLUSTER;
        String malformed = "malformed Redis Cluster URL " + redacted + ": expected " + clusterScheme + "[user:password@]host:port[,host:port...]";
        String scheme = uri.startsWith(CLUSTER_TLS) ? "rediss://" : "redis://";
        String rest = uri.substring(clusterScheme.length());
        int at = rest.lastIndexOf('@');
        String userInfo = at >= 0 ? rest.substring(0, at + 1) : "";
        String hosts = rest.substring(at + 1);
        int slash = hosts.indexOf('/');
        if (slash >= 0) {
            if (!hosts.substring(slash).equals("/") && !hosts.substring(slash).equals("/0")) {
                throw new IllegalArgumentException("a Redis Cluster has only database 0, got " + redacted);
            }
            hosts = hosts.substring(0, slash);
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (String host : hosts.split(",")) {
            if (host.isBlank()) {
                throw new IllegalArgumentException(malformed);
            }
            seeds.add(parse(scheme + userInfo + host.strip(), redacted, malformed));
        }
        return seeds;
    }

    /** One connection on the caller's client, which stays the caller's to shut down; the client in the answer is null. */
    static Opened connect(AbstractRedisClient client, RedisErrors errors) {
        try {
            if (client instanceof RedisClusterClient cluster) {
                StatefulRedisClusterConnection<String, String> connection = cluster.connect();
                return new Opened(null, connection, connection.sync());
            }
            if (client instanceof RedisClient one) {
                StatefulRedisConnection<String, String> connection = one.connect();
                return new Opened(null, connection, connection.sync());
            }
        } catch (RedisException e) {
            throw errors.unreachable(e);
        }
        throw new IllegalArgumentException("a store runs on a RedisClient or a RedisClusterClient, not a " + client.getClass().getName());
    }

    /** {@code uri} as Lettuce reads it; {@code malformedCluster} names the cluster's form when {@code uri} is one of its seeds. */
    private static RedisURI parse(String uri, String redacted, String malformedCluster) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("Redis URL must not be blank");
        }
        boolean sentinel = uri.startsWith(SENTINEL);
        if (!uri.startsWith("redis://") && !uri.startsWith("rediss://") && !sentinel) {
            throw new IllegalArgumentException("Redis URL must start with redis://, rediss://, redis-sentinel://, redis-cluster://"
                    + " or rediss-cluster://, got " + redacted);
        }
        // java.net.URI's and Lettuce's messages can quote the URL, password included; ours name only the server.
        String malformed = malformedCluster != null ? malformedCluster
                : sentinel ? "malformed Redis Sentinel URL " + redacted + ": expected " + SENTINEL + "[password@]host:port[,host:port]#master"
                : "malformed Redis URL " + redacted + ": expected " + uri.substring(0, uri.indexOf("://") + 3) + "[user:password@]host[:port][/db]";
        URI parsed;
        try {
            parsed = new URI(uri);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(malformed);
        }
        if (parsed.getHost() == null && !sentinel) { // several Sentinels have no one host: Lettuce checks each
            throw new IllegalArgumentException(malformed);
        }
        try {
            return RedisURI.create(uri);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(malformed);
        }
    }
}
