package dev.fenced.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;

/**
 * How a store reaches Redis, one small adapter per kind of client, so that the store itself knows
 * only {@link RedisCalls}: its own client on a URL, the caller's client, or the caller's
 * connection to one server or to a cluster. Each adapter decides what the store may close.
 */
sealed interface RedisClientAdapter {

    /** Opens (or takes) the one connection a store sends its commands on. */
    RedisLink connect(OwnClientSettings settings);

    /** Whether the settings of a client of the store's own apply: only on a URL. */
    default boolean ownsClient() {
        return false;
    }

    /** What a client of the store's own is built with; ignored by the adapters on the caller's client or connection. */
    record OwnClientSettings(Duration commandTimeout, ClientResources resources, ClientOptions options, RedisTls tls,
                             CommandListener listener) {
    }

    /** A client of the store's own on a URL (one server, Sentinel or Cluster, with TLS): the store closes both. */
    record OnUrl(String uri) implements RedisClientAdapter {
        @Override
        public RedisLink connect(OwnClientSettings settings) {
            RedisErrors errors = RedisErrors.forUri(uri);
            RedisConnector.Opened opened = RedisConnector.open(uri, settings.commandTimeout(), settings.resources(), settings.options(),
                    settings.tls(), settings.listener(), errors);
            return new RedisLink(new RedisCalls(opened.commands(), errors, toOneServer(opened) && reconnects(settings.options())), errors, () -> {
                opened.connection().close();
                opened.client().shutdown(Duration.ZERO, Duration.ofSeconds(2));
            });
        }

        @Override
        public boolean ownsClient() {
            return true;
        }
    }

    /** A connection of the store's own on the caller's client: the store closes the connection and leaves the client running. */
    record OnCallersClient(AbstractRedisClient client) implements RedisClientAdapter {
        @Override
        public RedisLink connect(OwnClientSettings settings) {
            RedisErrors errors = RedisErrors.forCallersConnection();
            RedisConnector.Opened opened = RedisConnector.connect(client, errors);
            return new RedisLink(new RedisCalls(opened.commands(), errors, toOneServer(opened) && reconnects(client.getOptions())), errors,
                    opened.connection()::close);
        }
    }

    /** The caller's connection to one server: the store never closes it. */
    record OnCallersConnection(StatefulRedisConnection<String, String> connection) implements RedisClientAdapter {
        @Override
        public RedisLink connect(OwnClientSettings settings) {
            RedisErrors errors = RedisErrors.forCallersConnection();
            return new RedisLink(new RedisCalls(connection.sync(), errors, false), errors, () -> { });
        }
    }

    /** The caller's connection to a cluster: the store never closes it. */
    record OnCallersClusterConnection(StatefulRedisClusterConnection<String, String> connection) implements RedisClientAdapter {
        @Override
        public RedisLink connect(OwnClientSettings settings) {
            RedisErrors errors = RedisErrors.forCallersConnection();
            return new RedisLink(new RedisCalls(connection.sync(), errors, false), errors, () -> { });
        }
    }

    /** Whether a connection the store opened goes to one server (directly or through a Sentinel), not to a cluster. */
    private static boolean toOneServer(RedisConnector.Opened opened) {
        return opened.connection() instanceof StatefulRedisConnection;
    }

    /** Whether the client connects again after a lost connection (Lettuce's default): without, a dropped connection stays gone. */
    private static boolean reconnects(ClientOptions options) {
        return options == null || options.isAutoReconnect();
    }

    /** A store's commands, how its errors name the server, and what closing the store closes. */
    record RedisLink(RedisCalls calls, RedisErrors errors, Runnable close) {
    }
}
