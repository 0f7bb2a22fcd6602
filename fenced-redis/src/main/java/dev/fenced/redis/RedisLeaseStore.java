package dev.fenced.redis;

import dev.fenced.CounterLostException;
import dev.fenced.FenceFloor;
import dev.fenced.Lease;
import dev.fenced.LeaseArguments;
import dev.fenced.LeaseStore;
import dev.fenced.StoreAuthenticationException;
import dev.fenced.StoreUnavailableException;
import dev.fenced.TokenSource;
import dev.fenced.internal.Redaction;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link LeaseStore} on one Redis server: {@code lock:{resource}} holds the lease,
 * {@code fence:{resource}} the token counter, and one Lua script takes both in one round trip.
 *
 * <p>Guarantees: tokens for a resource strictly increase in grant order as long as the counter
 * survives; when it does not (restart without persistence, FLUSHALL), the counter is raised above
 * the configured {@link FenceFloor} before the next token, or the loss is reported with
 * {@link CounterLostException} when this client has seen tokens and no floor is configured.
 * Does not guarantee: exclusivity across a failover to a replica that had not received the lease
 * (the fence still holds), or detection of a lost counter by a fresh process without a floor.
 *
 * <p>Thread-safe; one connection is shared by all callers: the store's own, closed by
 * {@link #close()}, or one the caller passes to {@link #builder(StatefulRedisConnection)}.
 */
public final class RedisLeaseStore implements LeaseStore, AutoCloseable {
    private static final String LOCK_PREFIX = "lock:{";
    private static final String FENCE_PREFIX = "fence:{";

    private final String redactedUri;
    private final java.util.Set<String> secrets;
    /** Null when the store runs on a connection the caller owns. */
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> commands;
    private final FenceFloor fenceFloor;
    private final TokenSource tokenSource;
    private final String ownerLabel;
    private final long reseedMargin;
    private final Map<String, Long> highestTokenSeen = new ConcurrentHashMap<>();

    private RedisLeaseStore(Builder builder) {
        this.fenceFloor = builder.fenceFloor;
        this.tokenSource = builder.tokenSource;
        this.ownerLabel = builder.ownerLabel;
        this.reseedMargin = builder.reseedMargin;
        if (builder.sharedConnection != null) {
            this.redactedUri = "(the caller's connection)";
            this.secrets = java.util.Set.of();
            this.client = null;
            this.connection = builder.sharedConnection;
            this.commands = connection.sync();
            return;
        }
        this.redactedUri = Redaction.describe(builder.uri);
        this.secrets = Redaction.secretsOf(builder.uri);
        RedisURI redisUri = parse(builder.uri, redactedUri);
        redisUri.setTimeout(builder.commandTimeout);
        // The sync API waits at most the URI's timeout for each command. Lettuce's TimeoutOptions
        // would add a timer task per command on top: CPU on every acquire for nothing this client uses.
        this.client = RedisClient.create(redisUri);
        if (builder.commandListener != null) {
            client.addListener(builder.commandListener);
        }
        try {
            this.connection = client.connect();
        } catch (RedisException e) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
            throw translateConnect(e);
        }
        this.commands = connection.sync();
    }

    /**
     * Starts a builder for the Redis server at {@code uri}: {@code redis://[user:password@]host:port[/db]},
     * {@code rediss://...} for TLS, or {@code redis-sentinel://host:port#master} to follow a
     * Sentinel's failovers (a failover can grant a lease twice; the fence still holds).
     */
    public static Builder builder(String uri) {
        return new Builder(uri, null);
    }

    /**
     * Starts a builder for a store on a Lettuce connection the caller already has, so that an
     * application keeps one connection (and one event-loop thread) for Redis. The connection's own
     * timeout bounds each command; {@link #close()} leaves the connection open. It must not be put
     * in MULTI or select another database while the store uses it.
     */
    public static Builder builder(StatefulRedisConnection<String, String> connection) {
        return new Builder(null, Objects.requireNonNull(connection, "connection"));
    }

    @Override
    public Optional<Lease> tryAcquire(String resource, Duration ttl) {
        LeaseArguments.requireValidResource(resource);
        LeaseArguments.requireValidTtl(ttl);
        String ownerId = newOwnerId();
        String[] keys = {lockKey(resource), fenceKey(resource)};
        if (tokenSource != null) {
            return acquireWithTokenSource(resource, ttl, ownerId, keys[0]);
        }
        long seen = highestTokenSeen.getOrDefault(resource, 0L);
        String hasFloor = fenceFloor == null ? "0" : "1";
        long reply = acquire(keys, ownerId, ttl, "", hasFloor, seen);
        if (reply == RedisScripts.NEED_FLOOR) {
            long floor = fenceFloor.highestStoredFence(resource);
            if (floor < 0) {
                throw new IllegalStateException("fence floor for '" + resource + "' is negative: " + floor);
            }
            // A resource with no stored fence starts at 1; one with fences was in use, so tokens may
            // have been issued above its floor that no row shows yet.
            long reseedTo = floor == 0 ? 0 : Math.addExact(floor, reseedMargin);
            reply = acquire(keys, ownerId, ttl, Long.toString(reseedTo), hasFloor, seen);
        }
        if (reply == RedisScripts.HELD) {
            return Optional.empty();
        }
        if (reply == RedisScripts.COUNTER_LOST) {
            throw new CounterLostException(resource, seen);
        }
        long token = reply;
        highestTokenSeen.merge(resource, token, Math::max);
        return Optional.of(new RedisLease(resource, token, ownerId, keys[0]));
    }

    private Optional<Lease> acquireWithTokenSource(String resource, Duration ttl, String ownerId, String lockKey) {
        Long granted = evalScalar(RedisScripts.ACQUIRE_LEASE_ONLY, ScriptOutputType.INTEGER, new String[] {lockKey}, ownerId,
                Long.toString(ttl.toMillis()));
        if (granted == 0) {
            return Optional.empty();
        }
        RedisLease lease = new RedisLease(resource, 0, ownerId, lockKey);
        long token;
        try {
            token = tokenSource.nextToken(resource);
        } catch (RuntimeException e) {
            lease.release();
            throw e;
        }
        return Optional.of(new RedisLease(resource, token, ownerId, lockKey));
    }

    @Override
    public void observeStoredFence(String resource, long storedFence) {
        if (tokenSource == null && storedFence > 0) {
            raiseCounter(resource, storedFence);
        }
    }

    /**
     * Raises the resource's counter to at least {@code floor} and returns its value; never lowers
     * it. For seeding a counter from a database before first use.
     */
    public long raiseCounter(String resource, long floor) {
        LeaseArguments.requireValidResource(resource);
        if (floor < 0) {
            throw new IllegalArgumentException("counter floor must not be negative, got " + floor);
        }
        return this.<Long>evalScalar(RedisScripts.RAISE_COUNTER, ScriptOutputType.INTEGER,
                new String[] {fenceKey(resource)}, Long.toString(floor));
    }

    /** What Redis holds for a resource now: the holder's owner id, its time left, the counter. */
    public LeaseSnapshot inspect(String resource) {
        LeaseArguments.requireValidResource(resource);
        try {
            String holder = commands.get(lockKey(resource));
            long pttl = commands.pttl(lockKey(resource));
            String counter = commands.get(fenceKey(resource));
            return new LeaseSnapshot(resource, holder, holder == null ? Duration.ZERO : Duration.ofMillis(Math.max(0, pttl)),
                    counter == null ? null : Long.valueOf(counter));
        } catch (RedisException e) {
            throw unavailable(e);
        }
    }

    /**
     * Deletes a resource's lease and counter, as Redis losing them would: the next acquisition
     * reseeds from the fence floor (or, without one, starts again at 1). For tests and demos that
     * start a resource over, and for retiring one; never while a holder may still write.
     *
     * @return whether there was anything to delete
     */
    public boolean forget(String resource) {
        LeaseArguments.requireValidResource(resource);
        try {
            return commands.del(lockKey(resource), fenceKey(resource)) > 0;
        } catch (RedisException e) {
            throw unavailable(e);
        }
    }

    static String lockKey(String resource) {
        return LOCK_PREFIX + resource + "}";
    }

    static String fenceKey(String resource) {
        return FENCE_PREFIX + resource + "}";
    }

    private String newOwnerId() {
        String random = UUID.randomUUID().toString();
        return ownerLabel == null ? random : ownerLabel + "/" + random;
    }

    /** The token, or one of {@link RedisScripts#HELD}, {@code COUNTER_LOST}, {@code NEED_FLOOR}. */
    private long acquire(String[] keys, String ownerId, Duration ttl, String floor, String hasFloor, long seen) {
        Long reply = evalScalar(RedisScripts.ACQUIRE, ScriptOutputType.INTEGER, keys, ownerId, Long.toString(ttl.toMillis()), floor,
                hasFloor, Long.toString(seen));
        return Objects.requireNonNull(reply, "acquire script reply");
    }

    /** EVALSHA, falling back to EVAL (which reloads the script) after a restart emptied the cache. */
    private <T> T evalScalar(String script, ScriptOutputType type, String[] keys, String... args) {
        try {
            try {
                return commands.evalsha(Sha1.of(script), type, keys, args);
            } catch (RedisNoScriptException e) {
                return commands.eval(script, type, keys, args);
            }
        } catch (RedisException e) {
            throw unavailable(e);
        }
    }

    private StoreUnavailableException unavailable(RedisException e) {
        String reason = rootMessage(e);
        if (isAuthFailure(reason)) {
            return new StoreAuthenticationException("Redis at " + redactedUri + " refused the credentials: " + reason, e);
        }
        return new StoreUnavailableException("Redis at " + redactedUri + " did not answer: " + reason, e);
    }

    private StoreUnavailableException translateConnect(RedisException e) {
        String reason = rootMessage(e);
        if (isAuthFailure(reason)) {
            return new StoreAuthenticationException("Redis at " + redactedUri + " refused the credentials: " + reason, e);
        }
        return new StoreUnavailableException("Redis at " + redactedUri + " is unreachable: " + reason, e);
    }

    private static boolean isAuthFailure(String reason) {
        String upper = reason.toUpperCase(Locale.ROOT);
        return upper.contains("WRONGPASS") || upper.contains("NOAUTH") || upper.contains("INVALID PASSWORD")
                || upper.contains("INVALID USERNAME-PASSWORD");
    }

    private String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        return Redaction.scrub(Redaction.redactUri(message), secrets);
    }

    private static RedisURI parse(String uri, String redacted) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("Redis URL must not be blank");
        }
        if (!uri.startsWith("redis://") && !uri.startsWith("rediss://") && !uri.startsWith("redis-sentinel://")) {
            throw new IllegalArgumentException("Redis URL must start with redis://, rediss:// or redis-sentinel://, got " + redacted);
        }
        try {
            java.net.URI parsed = new java.net.URI(uri);
            if (parsed.getHost() == null) {
                throw new IllegalArgumentException("malformed Redis URL " + redacted + ": expected redis://[user:password@]host[:port][/db]");
            }
            return RedisURI.create(uri);
        } catch (java.net.URISyntaxException | RuntimeException e) {
            if (e instanceof IllegalArgumentException && e.getMessage() != null && e.getMessage().startsWith("malformed")) {
                throw (IllegalArgumentException) e;
            }
            throw new IllegalArgumentException("malformed Redis URL " + redacted + ": expected redis://[user:password@]host[:port][/db]");
        }
    }

    /** Closes the store's own connection; a connection the caller passed in stays open. */
    @Override
    public void close() {
        if (client == null) {
            return;
        }
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    @Override
    public String toString() {
        return "RedisLeaseStore[" + redactedUri + "]";
    }

    private final class RedisLease implements Lease {
        private final String resource;
        private final long token;
        private final String ownerId;
        private final String lockKey;

        RedisLease(String resource, long token, String ownerId, String lockKey) {
            this.resource = resource;
            this.token = token;
            this.ownerId = ownerId;
            this.lockKey = lockKey;
        }

        @Override
        public String resource() {
            return resource;
        }

        @Override
        public long token() {
            return token;
        }

        @Override
        public String ownerId() {
            return ownerId;
        }

        @Override
        public boolean renew(Duration ttl) {
            LeaseArguments.requireValidTtl(ttl);
            Long renewed = evalScalar(RedisScripts.RENEW, ScriptOutputType.INTEGER, new String[] {lockKey}, ownerId,
                    Long.toString(ttl.toMillis()));
            return renewed == 1;
        }

        @Override
        public boolean isHeld() {
            try {
                return ownerId.equals(commands.get(lockKey));
            } catch (RedisException e) {
                throw unavailable(e);
            }
        }

        @Override
        public boolean release() {
            Long deleted = evalScalar(RedisScripts.RELEASE, ScriptOutputType.INTEGER, new String[] {lockKey}, ownerId);
            return deleted == 1;
        }

        @Override
        public String toString() {
            return "Lease[" + resource + ", token " + token + ", owner " + ownerId + "]";
        }
    }

    /** SHA-1 of a script, as EVALSHA names it. */
    static final class Sha1 {
        private static final Map<String, String> CACHE = new ConcurrentHashMap<>();

        private Sha1() {
        }

        static String of(String script) {
            return CACHE.computeIfAbsent(script, text -> {
                try {
                    byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
                    return HexFormat.of().formatHex(digest);
                } catch (NoSuchAlgorithmException e) {
                    throw new IllegalStateException("SHA-1 is required by every JVM", e);
                }
            });
        }
    }

    /** Configures a {@link RedisLeaseStore}; {@link #build()} connects and fails fast. */
    public static final class Builder {
        private final String uri;
        private final StatefulRedisConnection<String, String> sharedConnection;
        private FenceFloor fenceFloor;
        private TokenSource tokenSource;
        private String ownerLabel;
        private Duration commandTimeout = Duration.ofSeconds(5);
        private long reseedMargin = 1_000_000;
        private io.lettuce.core.event.command.CommandListener commandListener;

        private Builder(String uri, StatefulRedisConnection<String, String> sharedConnection) {
            this.uri = uri;
            this.sharedConnection = sharedConnection;
        }

        /** Where to reseed a missing counter from; see {@link FenceFloor}. */
        public Builder fenceFloor(FenceFloor fenceFloor) {
            this.fenceFloor = Objects.requireNonNull(fenceFloor, "fenceFloor");
            return this;
        }

        /**
         * How far above a non-zero floor a lost counter is reseeded; 1,000,000 by default. A floor
         * read from the rows cannot see tokens that were issued but never written; the margin keeps
         * a reseeded counter above those too, as long as fewer were issued since the last write.
         */
        public Builder reseedMargin(long reseedMargin) {
            if (reseedMargin < 0) {
                throw new IllegalArgumentException("reseed margin must not be negative, got " + reseedMargin);
            }
            this.reseedMargin = reseedMargin;
            return this;
        }

        /** Take tokens from a durable source and keep only the lease in Redis. */
        public Builder tokenSource(TokenSource tokenSource) {
            this.tokenSource = Objects.requireNonNull(tokenSource, "tokenSource");
            return this;
        }

        /** A readable prefix for owner ids (e.g. a worker name), shown by status tools. */
        public Builder ownerLabel(String ownerLabel) {
            this.ownerLabel = LeaseArguments.requireValidResource(ownerLabel);
            return this;
        }

        /**
         * How long one command may take before it fails with {@link StoreUnavailableException}; 5 s
         * by default. Not for a store on the caller's connection, which keeps its own timeout.
         */
        public Builder commandTimeout(Duration commandTimeout) {
            if (sharedConnection != null) {
                throw new IllegalStateException("a store on the caller's connection uses that connection's timeout;"
                        + " set it on the connection (RedisURI.setTimeout)");
            }
            this.commandTimeout = LeaseArguments.requireValidTtl(commandTimeout);
            return this;
        }

        /** For tests that count the commands this client sends. */
        Builder commandListener(io.lettuce.core.event.command.CommandListener listener) {
            this.commandListener = listener;
            return this;
        }

        /**
         * Connects to Redis.
         *
         * @throws IllegalArgumentException for a malformed URL
         * @throws StoreAuthenticationException when Redis refuses the credentials
         * @throws StoreUnavailableException when Redis cannot be reached
         */
        public RedisLeaseStore build() {
            return new RedisLeaseStore(this);
        }
    }
}
