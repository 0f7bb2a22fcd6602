package dev.fenced.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.resource.ClientResources;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;

/** Opens a store's own connection: checks the URL, sets the command timeout, fails fast. */
final class RedisConnector {
    private RedisConnector() {
    }

    /** A client and its one connection; closing is the store's job. */
    record Opened(RedisClient client, StatefulRedisConnection<String, String> connection) {
    }

    /**
     * @throws IllegalArgumentException for a malformed URL, naming it without its secrets
     * @throws dev.fenced.StoreUnavailableException when Redis cannot be reached or refuses the credentials
     */
    static Opened open(String uri, Duration commandTimeout, ClientResources resources, ClientOptions options, RedisTls tls,
                       CommandListener listener, RedisErrors errors) {
        RedisURI redisUri = parse(uri, errors.server());
        redisUri.setTimeout(commandTimeout);
        if (tls != null) {
            if (!redisUri.isSsl()) {
                throw new IllegalArgumentException("TLS settings need a rediss:// URL, got " + errors.server());
            }
            redisUri.setVerifyPeer(tls.verifyMode());
            ClientOptions.Builder withTls = options == null ? ClientOptions.builder() : options.mutate();
            options = withTls.sslOptions(tls.sslOptions()).build();
        }
        // The sync API waits at most the URI's timeout for each command. Lettuce's TimeoutOptions
        // would add a timer task per command on top: CPU on every acquire for nothing this client uses.
        // Resources passed in are the caller's: shutting this client down leaves them running.
        RedisClient client = resources == null ? RedisClient.create(redisUri) : RedisClient.create(resources, redisUri);
        if (options != null) {
            client.setOptions(options);
        }
        if (listener != null) {
            client.addListener(listener);
        }
        try {
            return new Opened(client, client.connect());
        } catch (RedisException e) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
            throw errors.unreachable(e);
        }
    }

    /** One connection on the caller's client, which stays the caller's to shut down. */
    static StatefulRedisConnection<String, String> connect(RedisClient client, RedisErrors errors) {
        try {
            return client.connect();
        } catch (RedisException e) {
            throw errors.unreachable(e);
        }
    }

    private static RedisURI parse(String uri, String redacted) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("Redis URL must not be blank");
        }
        if (!uri.startsWith("redis://") && !uri.startsWith("rediss://") && !uri.startsWith("redis-sentinel://")) {
            throw new IllegalArgumentException("Redis URL must start with redis://, rediss:// or redis-sentinel://, got " + redacted);
        }
        // java.net.URI's and Lettuce's messages can quote the URL, password included; ours name only the server.
        String malformed = "malformed Redis URL " + redacted + ": expected redis://[user:password@]host[:port][/db]";
        URI parsed;
        try {
            parsed = new URI(uri);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(malformed);
        }
        if (parsed.getHost() == null) {
            throw new IllegalArgumentException(malformed);
        }
        try {
            return RedisURI.create(uri);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(malformed);
        }
    }
}
