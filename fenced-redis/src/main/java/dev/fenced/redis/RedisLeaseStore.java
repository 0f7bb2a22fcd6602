package dev.fenced.redis;

import dev.fenced.CounterLostException;
import dev.fenced.FenceFloor;
import dev.fenced.FencedObserver;
import dev.fenced.FencedObserver.AcquireOutcome;
import dev.fenced.Lease;
import dev.fenced.LeaseArguments;
import dev.fenced.LeaseStore;
import dev.fenced.LogKeys;
import dev.fenced.StoreUnavailableException;
import dev.fenced.TokenIssuerMismatchException;
import dev.fenced.TokenSource;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * A {@link LeaseStore} on one Redis server: per resource, one key holds the lease and one the token
 * counter, laid out by {@link RedisKeys} ({@code lock:{resource}} and {@code fence:{resource}},
 * after an optional {@link Builder#keyPrefix(String) prefix}); one Lua script takes both in one
 * round trip.
 *
 * <p>Guarantees: tokens for a resource strictly increase in grant order as long as the counter
 * survives; when it does not (restart without persistence, FLUSHALL), the counter is raised above
 * the configured {@link FenceFloor} before the next token, or the loss is reported with
 * {@link CounterLostException} when this client has seen tokens (of the last
 * {@link Builder#tokensRemembered} resources it acquired) and no floor is configured. With
 * {@link Builder#tokenEpochs token epochs}, tokens never repeat or go back whatever Redis loses,
 * a failover to a lagging replica included. Does not guarantee: exclusivity across a failover to a
 * replica that had not received the lease (the fence still holds); without epochs, that a failover
 * to a lagging replica or a fresh process after a loss never repeats a token.
 * Stores with different key prefixes share nothing: neither leases nor counters.
 *
 * <p>Thread-safe; one connection is shared by all callers: the store's own, closed by
 * {@link #close()} (on a client of its own, or on the caller's {@link #builder(RedisClient)}),
 * or one the caller passes to {@link #builder(StatefulRedisConnection)}.
 */
public final class RedisLeaseStore implements LeaseStore, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RedisLeaseStore.class);
    /** With token epochs, a token is epoch &lt;&lt; 24 | counter: 2^39 epochs of 2^24 tokens each. */
    private static final int EPOCH_SHIFT = 24;
    private static final long MAX_EPOCH = (1L << 39) - 1;
    static final int DEFAULT_TOKENS_REMEMBERED = 10_000;

    private final RedisErrors errors;
    /** Null when the store runs on a client or a connection the caller owns. */
    private final AbstractRedisClient client;
    /** Whether close() closes the connection: the store opened it (on its own client or the caller's). */
    private final boolean ownsConnection;
    private final StatefulConnection<String, String> connection;
    private final RedisCalls calls;
    private final RedisKeys keys;
    private final FenceFloor fenceFloor;
    private final TokenSource tokenSource;
    private final TokenSource tokenEpochs;
    private final TokenIssuer issuer;
    private final String ownerLabel;
    private final long reseedMargin;
    private final FencedObserver observer;
    /**
     * The highest token granted per resource, against a counter that went back behind it (the
     * acquire script's "seen"). Bounded: past {@link Builder#tokensRemembered} resources the least
     * recently acquired is forgotten, which only weakens that check for it, as for a client that
     * never saw its tokens (the fence floor still reseeds a lost counter).
     */
    private final Map<String, Long> highestTokenSeen;

    private RedisLeaseStore(Builder builder) {
        this.keys = builder.keys;
        this.fenceFloor = builder.fenceFloor;
        this.tokenSource = builder.tokenSource;
        this.tokenEpochs = builder.tokenEpochs;
        this.issuer = builder.tokenSource != null ? TokenIssuer.SOURCE : builder.tokenEpochs != null ? TokenIssuer.EPOCHS : TokenIssuer.REDIS;
        this.ownerLabel = builder.ownerLabel;
        this.reseedMargin = builder.reseedMargin;
        this.observer = builder.observer;
        this.highestTokenSeen = Collections.synchronizedMap(new RecentTokens(builder.tokensRemembered));
        if (builder.sharedConnection != null || builder.sharedClusterConnection != null) {
            this.errors = RedisErrors.forCallersConnection();
            this.client = null;
            this.ownsConnection = false;
            if (builder.sharedConnection != null) {
                this.connection = builder.sharedConnection;
                this.calls = new RedisCalls(builder.sharedConnection.sync(), errors);
            } else {
                this.connection = builder.sharedClusterConnection;
                this.calls = new RedisCalls(builder.sharedClusterConnection.sync(), errors);
            }
        } else if (builder.callersClient != null) {
            this.errors = RedisErrors.forCallersConnection();
            this.client = null;
            RedisConnector.Opened opened = RedisConnector.connect(builder.callersClient, errors);
            this.connection = opened.connection();
            this.ownsConnection = true;
            this.calls = new RedisCalls(opened.commands(), errors);
        } else {
            this.ownsConnection = true;
            this.errors = RedisErrors.forUri(builder.uri);
            RedisConnector.Opened opened = RedisConnector.open(builder.uri, builder.commandTimeout,
                    builder.clientResources, builder.clientOptions, builder.tls, builder.commandListener, errors);
            this.client = opened.client();
            this.connection = opened.connection();
            this.calls = new RedisCalls(opened.commands(), errors);
        }
    }

    /**
     * Starts a builder for the Redis at {@code uri}: {@code redis://[user:password@]host:port[/db]},
     * {@code rediss://...} for TLS ({@link Builder#tls}), {@code redis-sentinel://host:port[,host:port]#master}
     * to follow a Sentinel's failovers, or {@code redis-cluster://host:port[,host:port...]}
     * ({@code rediss-cluster://} with TLS) for a Redis Cluster: a resource's two keys share a hash
     * tag, so each acquisition runs on the one node that owns them. A failover can grant a lease
     * twice, and can lose the last tokens of a lagging replica; the fence still holds.
     */
    public static Builder builder(String uri) {
        return new Builder(uri, null, null, null);
    }

    /**
     * Starts a builder for a store on a Lettuce connection the caller already has, so that an
     * application keeps one connection (and one event-loop thread) for Redis. The connection's own
     * timeout bounds each command; {@link #close()} leaves the connection open. It must not be put
     * in MULTI or select another database while the store uses it.
     */
    public static Builder builder(StatefulRedisConnection<String, String> connection) {
        return new Builder(null, Objects.requireNonNull(connection, "connection"), null, null);
    }

    /** As {@link #builder(StatefulRedisConnection)}, on the caller's connection to a Redis Cluster. */
    public static Builder builder(StatefulRedisClusterConnection<String, String> connection) {
        return new Builder(null, null, null, Objects.requireNonNull(connection, "connection"));
    }

    /**
     * Starts a builder for a store on a Lettuce client the caller already has (for example Spring's
     * {@code LettuceConnectionFactory.getNativeClient()}): the store opens one connection of its
     * own on it, with the client's URI, options, TLS settings and resources, and {@link #close()}
     * closes that connection and leaves the client running. The client's URI timeout bounds each command.
     */
    public static Builder builder(RedisClient client) {
        return new Builder(null, null, Objects.requireNonNull(client, "client"), null);
    }

    /** As {@link #builder(RedisClient)}, on the caller's Redis Cluster client: the store opens one cluster connection of its own. */
    public static Builder builder(RedisClusterClient client) {
        return new Builder(null, null, Objects.requireNonNull(client, "client"), null);
    }

    /** Who issues this store's tokens: what it records for a resource on its first grant, and checks on every later one. */
    public TokenIssuer tokenIssuer() {
        return issuer;
    }

    /** The key layout this store reads and writes; {@link RedisKeys#DEFAULT} unless a prefix was set. */
    public RedisKeys keys() {
        return keys;
    }

    @Override
    public Optional<Lease> tryAcquire(String resource, Duration ttl) {
        LeaseArguments.requireValidResource(resource);
        LeaseArguments.requireValidTtl(ttl);
        long started = System.nanoTime();
        Optional<Lease> lease;
        try {
            lease = acquireOnce(resource, ttl);
        } catch (RuntimeException e) {
            observer.acquired(resource, AcquireOutcome.ERROR, 0, Duration.ofNanos(System.nanoTime() - started));
            throw e;
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        if (lease.isPresent()) {
            observer.acquired(resource, AcquireOutcome.GRANTED, lease.get().token(), took);
        } else {
            observer.acquired(resource, AcquireOutcome.BUSY, 0, took);
        }
        return lease;
    }

    private Optional<Lease> acquireOnce(String resource, Duration ttl) {
        String ownerId = newOwnerId();
        String[] resourceKeys = {keys.lockKey(resource), keys.fenceKey(resource), keys.issuerKey(resource)};
        if (tokenSource != null) {
            return acquireWithTokenSource(resource, ttl, ownerId, resourceKeys[0], resourceKeys[2]);
        }
        if (tokenEpochs != null) {
            return acquireInEpoch(resource, ttl, ownerId, resourceKeys);
        }
        long seen = highestSeen(resource);
        String hasFloor = fenceFloor == null ? "0" : "1";
        long reply = acquire(resourceKeys, ownerId, ttl, "", hasFloor, seen);
        if (reply == RedisScripts.NEED_FLOOR) {
            long floor = fenceFloor.highestStoredFence(resource);
            if (floor < 0) {
                throw new IllegalStateException("fence floor for '" + resource + "' is negative: " + floor);
            }
            // A resource with no stored fence starts at 1; one with fences was in use, so tokens may
            // have been issued above its floor that no row shows yet.
            long reseedTo = floor == 0 ? 0 : Math.addExact(floor, reseedMargin);
            reply = acquire(resourceKeys, ownerId, ttl, Long.toString(reseedTo), hasFloor, seen);
            if (reply > 0 && floor > 0) { // a floor of 0 is a resource never written: a first counter, not a lost one
                try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource);
                     MDC.MDCCloseable t = MDC.putCloseable(LogKeys.TOKEN, Long.toString(reply))) {
                    LOG.warn("counter of {} was missing in Redis; reseeded above the highest stored fence {} to {}",
                            resource, floor, reseedTo);
                }
                observer.counterReseeded(resource, floor, reseedTo);
            }
        }
        if (reply == RedisScripts.HELD) {
            return Optional.empty();
        }
        if (reply == RedisScripts.OTHER_ISSUER) {
            throw otherIssuer(resource, calls.call(redis -> redis.get(resourceKeys[2])));
        }
        if (reply == RedisScripts.COUNTER_LOST) {
            LOG.error("counter of {} is gone from Redis after this client saw token {}, and no fence floor is configured"
                    + " to reseed it from; refusing to issue a token that could repeat", resource, seen);
            throw new CounterLostException(resource, seen);
        }
        long token = reply;
        highestTokenSeen.merge(resource, token, Math::max);
        return Optional.of(new RedisLease(resource, token, ownerId, resourceKeys[0], calls, observer));
    }

    /**
     * See {@link RedisScripts#ACQUIRE_IN_EPOCH}: a new epoch is drawn only when Redis asks for one,
     * for the server that asked; if the keys moved to another server meanwhile, Redis asks again.
     */
    private Optional<Lease> acquireInEpoch(String resource, Duration ttl, String ownerId, String[] resourceKeys) {
        String[] epochKeys = {resourceKeys[0], resourceKeys[1], keys.epochKey(resource), resourceKeys[2], keys.epochTicketKey(resource)};
        String newEpoch = "";
        String server = "";
        String ticket = "";
        for (int attempt = 0; attempt < 3; attempt++) {
            List<Object> reply = calls.scriptList(RedisScripts.ACQUIRE_IN_EPOCH, epochKeys, ownerId, Long.toString(ttl.toMillis()),
                    newEpoch, server, issuer.recorded(), ticket, UUID.randomUUID().toString());
            long counter = (Long) reply.get(0);
            long held = (Long) reply.get(1);
            if (counter == RedisScripts.HELD) {
                return Optional.empty();
            }
            if (counter == RedisScripts.OTHER_ISSUER) {
                throw otherIssuer(resource, (String) reply.get(2));
            }
            if (counter > 0) {
                return Optional.of(new RedisLease(resource, (held << EPOCH_SHIFT) | counter, ownerId, resourceKeys[0], calls, observer));
            }
            server = (String) reply.get(2);
            ticket = (String) reply.get(3);
            long drawn = tokenEpochs.nextToken(resource);
            if (drawn <= held || drawn > MAX_EPOCH) {
                throw new IllegalStateException("the token epoch source gave " + drawn + " for '" + resource + "', which is not above the"
                        + " epoch " + held + " Redis holds or is over " + MAX_EPOCH + "; was its database restored from an older backup?");
            }
            try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource)) {
                if (held == 0) {
                    LOG.info("tokens of {} begin in epoch {}", resource, drawn);
                } else {
                    LOG.warn("Redis may have lost tokens of {} (epoch {} began on another redis-server process or replication"
                            + " history, or its counter is gone); tokens go on in epoch {}, above every token issued before",
                            resource, held, drawn);
                    observer.counterReseeded(resource, held << EPOCH_SHIFT, drawn << EPOCH_SHIFT);
                }
            }
            newEpoch = Long.toString(drawn);
        }
        throw new StoreUnavailableException("the keys of '" + resource + "' moved to another Redis server three times while a new"
                + " token epoch was drawn for them; a failover under way?", null);
    }

    private Optional<Lease> acquireWithTokenSource(String resource, Duration ttl, String ownerId, String lockKey, String issuerKey) {
        long granted = calls.script(RedisScripts.ACQUIRE_LEASE_ONLY, new String[] {lockKey, issuerKey}, ownerId, Long.toString(ttl.toMillis()),
                issuer.recorded());
        if (granted == RedisScripts.OTHER_ISSUER) {
            throw otherIssuer(resource, calls.call(redis -> redis.get(issuerKey)));
        }
        if (granted == 0) {
            return Optional.empty();
        }
        RedisLease lease = new RedisLease(resource, 0, ownerId, lockKey, calls, observer);
        long token;
        try {
            token = tokenSource.nextToken(resource);
        } catch (RuntimeException e) {
            lease.release();
            throw e;
        }
        return Optional.of(new RedisLease(resource, token, ownerId, lockKey, calls, observer));
    }

    private TokenIssuerMismatchException otherIssuer(String resource, String recorded) {
        TokenIssuerMismatchException refused = new TokenIssuerMismatchException(resource, String.valueOf(recorded), issuer.recorded());
        try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource)) {
            LOG.error(refused.getMessage());
        }
        return refused;
    }

    /**
     * Hands the resource's tokens over to this store's issuer, deliberately: refused while any
     * lease on it is live (returns false), since a holder of the old issuer could otherwise go on
     * beside one of the new. {@code highestIssued} must be at least every token the old issuer
     * may have handed out (the highest stored fence, and what the old issuer's counter or sequence
     * shows, plus a margin for tokens issued but never written): with Redis's own counter the
     * counter is set to it, so the next token is above it; with epochs and a durable source, the
     * caller must first have raised their sequence so that what they issue next is above it
     * (an epoch {@code e} issues tokens from {@code e << 24}). Then no token of the new issuer is
     * ever at or below a token of the old.
     *
     * @return true when the resource now records this store's issuer
     */
    public boolean switchTokenIssuer(String resource, long highestIssued) {
        LeaseArguments.requireValidResource(resource);
        if (highestIssued < 0) {
            throw new IllegalArgumentException("highest token issued must not be negative, got " + highestIssued);
        }
        String counter = issuer == TokenIssuer.REDIS ? Long.toString(highestIssued) : "";
        boolean switched = calls.script(RedisScripts.SWITCH_ISSUER, new String[] {keys.lockKey(resource), keys.fenceKey(resource),
                keys.epochKey(resource), keys.issuerKey(resource), keys.epochTicketKey(resource)}, issuer.recorded(), counter) == 1;
        if (switched) {
            try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource)) {
                LOG.warn("tokens of {} now come from {}, above {}", resource, issuer.recorded(), highestIssued);
            }
        }
        return switched;
    }

    /** What Redis shows of the tokens the resource's issuer handed out; see {@link LeaseSnapshot#highestTokenIssued()}. */
    private static long highestTokenIssued(String recorded, String counter, String epoch) {
        long count = counter == null ? 0 : Long.parseLong(counter);
        if (TokenIssuer.SOURCE.recorded().equals(recorded)) {
            return 0L;
        }
        if (epoch != null) {
            long inEpoch = Long.parseLong(epoch.substring(0, epoch.indexOf(':'))) << EPOCH_SHIFT;
            return Math.max(inEpoch | Math.min(count, (1L << EPOCH_SHIFT) - 1), count);
        }
        return count;
    }

    @Override
    public void observeStoredFence(String resource, long storedFence) {
        if (tokenEpochs != null) {
            raiseInEpoch(resource, storedFence);
            return;
        }
        if (tokenSource == null && storedFence > 0) {
            long before = calls.script(RedisScripts.RAISE_COUNTER, counterKeys(resource), Long.toString(storedFence), "0");
            if (before < 0) {
                try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource)) {
                    LOG.warn("counter of {} is missing in Redis; not recreated from the stored fence {}, above which tokens may"
                            + " have been issued: the next acquisition reseeds it from the fence floor or reports it lost",
                            resource, storedFence);
                }
            } else if (before < storedFence) {
                try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource)) {
                    LOG.warn("counter of {} was behind a stored fence (at {}, fence {}); raised so the next token is above it",
                            resource, before, storedFence);
                }
                observer.counterRaised(resource, storedFence);
            }
        }
    }

    private void raiseInEpoch(String resource, long storedFence) {
        if (storedFence <= 0) {
            return;
        }
        long counter = storedFence & ((1L << EPOCH_SHIFT) - 1);
        long before = calls.script(RedisScripts.RAISE_IN_EPOCH, new String[] {keys.fenceKey(resource), keys.epochKey(resource)},
                Long.toString(storedFence >>> EPOCH_SHIFT), Long.toString(counter));
        if (before >= 0 && before < counter) {
            try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource)) {
                LOG.warn("counter of {} was behind a stored fence (at {}, fence {}); raised so the next token is above it",
                        resource, before, storedFence);
            }
            observer.counterRaised(resource, storedFence);
        }
    }

    /** Checks that Redis answers, for health checks; returns how long the round trip took. */
    public Duration ping() {
        long started = System.nanoTime();
        calls.call(redis -> redis.ping());
        return Duration.ofNanos(System.nanoTime() - started);
    }

    /** The Redis server's version (INFO server, {@code redis_version}), for reports and health details; "unknown" if it says none. */
    public String serverVersion() {
        String info = calls.call(redis -> redis.info("server"));
        return info.lines().filter(line -> line.startsWith("redis_version:")).map(line -> line.substring("redis_version:".length()).trim())
                .findFirst().orElse("unknown");
    }

    /**
     * Raises the resource's counter to at least {@code floor} and returns its value; never lowers
     * it. For seeding a counter from a database before first use.
     *
     * <p>Creates a missing counter only for a resource that never had a token issued, as far as
     * can be told: Redis records no issuer and no epoch for it, and this store has seen none of
     * its tokens. Otherwise the counter was lost after tokens were issued, and seeding it from the
     * stored fences would issue again the tokens granted above them; it is left missing, for the
     * next acquisition to reseed from the {@link Builder#fenceFloor fence floor}, with its margin.
     * Limit: Redis that lost every key of the resource (a restart without persistence, FLUSHALL)
     * looks like a new resource to a store that saw none of its tokens; call this only before first
     * use, and give the store a fence floor.
     *
     * @throws CounterLostException when the counter is missing after tokens were issued; nothing changed
     * @throws IllegalStateException for a store with token epochs
     */
    public long raiseCounter(String resource, long floor) {
        LeaseArguments.requireValidResource(resource);
        if (tokenEpochs != null) {
            throw new IllegalStateException("a store with token epochs has no counter to seed: its epochs come from their source");
        }
        if (floor < 0) {
            throw new IllegalArgumentException("counter floor must not be negative, got " + floor);
        }
        long seen = highestSeen(resource);
        long before = calls.script(RedisScripts.RAISE_COUNTER, counterKeys(resource), Long.toString(floor), seen == 0 ? "1" : "0");
        if (before < 0) {
            throw new CounterLostException(resource, Math.max(seen, floor));
        }
        return Math.max(before, floor);
    }

    /** The least recently acquired resources first, the oldest dropped past the limit. Not thread-safe on its own. */
    private static final class RecentTokens extends LinkedHashMap<String, Long> {
        private static final long serialVersionUID = 1L;
        private final int limit;

        RecentTokens(int limit) {
            super(16, 0.75f, true);
            this.limit = limit;
        }

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > limit;
        }
    }

    /** How many resources' highest tokens this store remembers now; for tests of the bound. */
    int resourcesRemembered() {
        return highestTokenSeen.size();
    }

    /** The highest token this store has granted for the resource, 0 for none. */
    private long highestSeen(String resource) {
        return highestTokenSeen.getOrDefault(resource, 0L);
    }

    private String[] counterKeys(String resource) {
        return new String[] {keys.fenceKey(resource), keys.epochKey(resource), keys.issuerKey(resource)};
    }

    /**
     * What Redis holds for a resource now, under this store's keys: the holder's owner id, its time
     * left, the counter, the issuer recorded for its tokens and the highest token it shows issued.
     */
    public LeaseSnapshot inspect(String resource) {
        String lockKey = keys.lockKey(resource);
        String fenceKey = keys.fenceKey(resource);
        String issuerKey = keys.issuerKey(resource);
        String epochKey = keys.epochKey(resource);
        return calls.call(redis -> {
            String holder = redis.get(lockKey);
            long pttl = redis.pttl(lockKey);
            String counter = redis.get(fenceKey);
            String recorded = redis.get(issuerKey);
            String epoch = redis.get(epochKey);
            return new LeaseSnapshot(resource, holder, holder == null ? Duration.ZERO : Duration.ofMillis(Math.max(0, pttl)),
                    counter == null ? null : Long.valueOf(counter), recorded, highestTokenIssued(recorded, counter, epoch));
        });
    }

    /**
     * Deletes a resource's lease and counter under this store's keys, as Redis losing them would:
     * the next acquisition reseeds from the fence floor (or, without one, starts again at 1). For
     * tests and demos that start a resource over, and for retiring one; never while a holder may
     * still write. Keys under other prefixes are left alone.
     *
     * @return whether there was anything to delete
     */
    public boolean forget(String resource) {
        String lockKey = keys.lockKey(resource);
        String fenceKey = keys.fenceKey(resource);
        String epochKey = keys.epochKey(resource);
        String issuerKey = keys.issuerKey(resource);
        String ticketKey = keys.epochTicketKey(resource);
        return calls.call(redis -> redis.del(lockKey, fenceKey, epochKey, issuerKey, ticketKey)) > 0;
    }

    private String newOwnerId() {
        String random = UUID.randomUUID().toString();
        return ownerLabel == null ? random : ownerLabel + "/" + random;
    }

    /** The token, or one of {@link RedisScripts#HELD}, {@code COUNTER_LOST}, {@code NEED_FLOOR}. */
    private long acquire(String[] resourceKeys, String ownerId, Duration ttl, String floor, String hasFloor, long seen) {
        return calls.script(RedisScripts.ACQUIRE, resourceKeys, ownerId, Long.toString(ttl.toMillis()), floor, hasFloor,
                Long.toString(seen), issuer.recorded());
    }

    /** Closes the store's own connection; a connection the caller passed in stays open. */
    @Override
    public void close() {
        if (ownsConnection) {
            connection.close();
        }
        if (client != null) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Override
    public String toString() {
        return "RedisLeaseStore[" + errors.server() + (keys.prefix().isEmpty() ? "" : ", key prefix " + keys.prefix()) + "]";
    }

    /** Configures a {@link RedisLeaseStore}; {@link #build()} connects and fails fast. */
    public static final class Builder {
        private final String uri;
        private final StatefulRedisConnection<String, String> sharedConnection;
        private final AbstractRedisClient callersClient;
        private final StatefulRedisClusterConnection<String, String> sharedClusterConnection;
        private FenceFloor fenceFloor;
        private TokenSource tokenSource;
        private TokenSource tokenEpochs;
        private String ownerLabel;
        private Duration commandTimeout = Duration.ofSeconds(5);
        private long reseedMargin = 1_000_000;
        private int tokensRemembered = DEFAULT_TOKENS_REMEMBERED;
        private RedisKeys keys = RedisKeys.DEFAULT;
        private CommandListener commandListener;
        private FencedObserver observer = FencedObserver.NONE;
        private ClientResources clientResources;
        private ClientOptions clientOptions;
        private RedisTls tls;

        private Builder(String uri, StatefulRedisConnection<String, String> sharedConnection, AbstractRedisClient callersClient,
                        StatefulRedisClusterConnection<String, String> sharedClusterConnection) {
            this.uri = uri;
            this.sharedConnection = sharedConnection;
            this.callersClient = callersClient;
            this.sharedClusterConnection = sharedClusterConnection;
        }

        /**
         * Puts {@code prefix} before every key, e.g. {@code "app1:"} for {@code app1:lock:{resource}},
         * so that applications sharing one Redis keep apart leases and counters of resources with the
         * same name. Without it the keys are those stores have always used. Stores exclude each other
         * only under one prefix: while a deployment changes it, old and new processes can hold the
         * same resource at once (the fence still holds), and the new counter starts over (give the
         * store a {@link #fenceFloor(FenceFloor)}).
         *
         * @throws IllegalArgumentException when {@link RedisKeys#withPrefix(String)} refuses the prefix
         */
        public Builder keyPrefix(String prefix) {
            this.keys = RedisKeys.withPrefix(prefix);
            return this;
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

        /**
         * How many resources' highest tokens the store remembers, to refuse a counter that went back
         * behind one ({@link CounterLostException}, or a reseed from the floor); 10,000 by default,
         * some hundred bytes each. Past it, the least recently acquired resource is forgotten: for it, the
         * store is then like a client that never saw its tokens, and only the fence floor catches a
         * lost counter. A process that acquires more resources than this in turn (a fleet worker over
         * many merchants) needs a fence floor or token epochs; 0 remembers none.
         */
        public Builder tokensRemembered(int resources) {
            if (resources < 0) {
                throw new IllegalArgumentException("tokens remembered must not be negative, got " + resources);
            }
            this.tokensRemembered = resources;
            return this;
        }

        /** Take tokens from a durable source and keep only the lease in Redis. */
        public Builder tokenSource(TokenSource tokenSource) {
            this.tokenSource = Objects.requireNonNull(tokenSource, "tokenSource");
            return this;
        }

        /**
         * Redis issues the tokens, in epochs drawn from a durable source (e.g.
         * {@code JdbcSequenceTokenSource.epochs(dataSource)}, one {@code nextval} each). A new epoch is drawn for a resource the first time it is
         * acquired and whenever Redis may have lost its tokens: the resource's keys found on another
         * redis-server process or replication history than the one its epoch began on (a restart, a
         * failover to a replica however far behind, a resharding), or its counter or epoch key gone
         * (FLUSHALL, eviction).
         * Tokens then never repeat or go back, whatever Redis loses, and the usual acquisition stays
         * one round trip to Redis. Replaces the {@link #fenceFloor fence floor}; not with a
         * {@link #tokenSource token source}. A token is {@code epoch << 24 | counter}: 2^39 epochs (every
         * resource's first acquisition and each loss use one) of 2^24 tokens (past them, a new epoch).
         * Needs Redis 5 or later.
         */
        public Builder tokenEpochs(TokenSource epochs) {
            this.tokenEpochs = Objects.requireNonNull(epochs, "epochs");
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
            requireOwnConnection("timeout; set it on the client's RedisURI (RedisURI.setTimeout)");
            this.commandTimeout = LeaseArguments.requireValidTtl(commandTimeout);
            return this;
        }

        /** Hears grants, renewals, reseeds and raises, for metrics. */
        public Builder observer(FencedObserver observer) {
            this.observer = FencedObserver.all(Objects.requireNonNull(observer, "observer"));
            return this;
        }

        /**
         * The Lettuce resources (event loops, DNS, Lettuce's own command latency metrics) to share
         * with the application's other Redis clients; the store never shuts them down. Not for a
         * store on the caller's connection.
         */
        public Builder clientResources(ClientResources clientResources) {
            requireOwnConnection("client resources");
            this.clientResources = Objects.requireNonNull(clientResources, "clientResources");
            return this;
        }

        /**
         * Lettuce's client options: TLS ({@code SslOptions}), socket and timeout options,
         * reconnection. The command timeout stays {@link #commandTimeout(Duration)}'s. Not for a
         * store on the caller's connection.
         */
        public Builder clientOptions(ClientOptions clientOptions) {
            requireOwnConnection("client options");
            this.clientOptions = Objects.requireNonNull(clientOptions, "clientOptions");
            return this;
        }

        /**
         * Certificates to trust, this client's certificate and how much to verify, for a
         * {@code rediss://} URL. A failed handshake is a {@link StoreTlsException}.
         */
        public Builder tls(RedisTls tls) {
            requireOwnConnection("TLS settings");
            this.tls = Objects.requireNonNull(tls, "tls");
            return this;
        }

        private void requireOwnConnection(String what) {
            if (sharedConnection != null || callersClient != null || sharedClusterConnection != null) {
                throw new IllegalStateException("a store on the caller's client or connection uses its " + what);
            }
        }

        /** For tests that count the commands this client sends. */
        Builder commandListener(CommandListener listener) {
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
            if (tokenEpochs != null && (tokenSource != null || fenceFloor != null)) {
                throw new IllegalArgumentException("token epochs replace a fence floor and a token source; configure one of them");
            }
            return new RedisLeaseStore(this);
        }
    }
}
