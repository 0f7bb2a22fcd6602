package dev.fenced.redis;

import dev.fenced.CounterLostException;
import dev.fenced.FencedObserver;
import dev.fenced.Lease;
import dev.fenced.LeaseArguments;
import dev.fenced.LeaseStore;
import dev.fenced.LeaseView;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A {@link LeaseStore} on one Redis server: per resource, one key holds the lease and one the token
 * counter, laid out by {@link RedisKeys} ({@code lock:{resource}} and {@code fence:{resource}},
 * after an optional {@link Builder#keyPrefix(String) prefix}); one Lua script takes both in one
 * round trip. Who issues the tokens is the store's {@link TokenPolicy}.
 *
 * <p>Guarantees: tokens for a resource strictly increase in grant order as long as the counter
 * survives; when it does not (restart without persistence, FLUSHALL), the counter is raised above
 * the policy's {@link dev.fenced.FenceFloor}, or the loss is reported with {@link CounterLostException}
 * when this client has seen tokens (of the last {@link Builder#tokensRemembered} resources it
 * acquired) and no floor is configured; {@link TokenPolicy#epochs token epochs} never repeat or go
 * back whatever Redis loses. Does not guarantee: exclusivity across a failover to a replica that had
 * not received the lease (the fence still holds); without epochs, that a failover to a lagging
 * replica or a fresh process after a loss never repeats a token.
 * Stores with different key prefixes share nothing: neither leases nor counters.
 *
 * <p>Thread-safe; one connection is shared by all callers: the store's own, closed by
 * {@link #close()} (on a client of its own, or on the caller's {@link #builder(RedisClient)}),
 * or one the caller passes to {@link #builder(StatefulRedisConnection)}.
 */
public final class RedisLeaseStore implements LeaseStore, AutoCloseable {
    static final int DEFAULT_TOKENS_REMEMBERED = 10_000;

    private final RedisClientAdapter.RedisLink link;
    private final RedisCalls calls;
    private final RedisKeys keys;
    private final TokenPolicy tokens;
    /** The store's part of its policy's work: connection, keys, observer, owner ids, tokens seen. */
    private final PolicyContext context;

    private RedisLeaseStore(Builder builder) {
        LettuceVersion.requireSupported(LettuceVersion.onClassPath());
        this.keys = builder.keys;
        this.tokens = builder.tokens == null ? TokenPolicy.redisCounter() : builder.tokens;
        this.link = builder.adapter.connect(new RedisClientAdapter.OwnClientSettings(builder.commandTimeout, builder.clientResources,
                builder.clientOptions, builder.tls, builder.commandListener));
        this.calls = link.calls();
        this.context = new PolicyContext(calls, keys, builder.observer, tokens.issuer(), builder.ownerLabel, builder.tokensRemembered);
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
        return new Builder(new RedisClientAdapter.OnUrl(uri));
    }

    /**
     * Starts a builder for a store on a Lettuce connection the caller already has, so that an
     * application keeps one connection (and one event-loop thread) for Redis. The connection's own
     * timeout bounds each command; {@link #close()} leaves the connection open. It must not be put
     * in MULTI or select another database while the store uses it.
     */
    public static Builder builder(StatefulRedisConnection<String, String> connection) {
        return new Builder(new RedisClientAdapter.OnCallersConnection(Objects.requireNonNull(connection, "connection")));
    }

    /** As {@link #builder(StatefulRedisConnection)}, on the caller's connection to a Redis Cluster. */
    public static Builder builder(StatefulRedisClusterConnection<String, String> connection) {
        return new Builder(new RedisClientAdapter.OnCallersClusterConnection(Objects.requireNonNull(connection, "connection")));
    }

    /**
     * Starts a builder for a store on a Lettuce client the caller already has (for example Spring's
     * {@code LettuceConnectionFactory.getNativeClient()}): the store opens one connection of its
     * own on it, with the client's URI, options, TLS settings and resources, and {@link #close()}
     * closes that connection and leaves the client running. The client's URI timeout bounds each command.
     */
    public static Builder builder(RedisClient client) {
        return new Builder(new RedisClientAdapter.OnCallersClient(Objects.requireNonNull(client, "client")));
    }

    /** As {@link #builder(RedisClient)}, on the caller's Redis Cluster client: the store opens one cluster connection of its own. */
    public static Builder builder(RedisClusterClient client) {
        return new Builder(new RedisClientAdapter.OnCallersClient(Objects.requireNonNull(client, "client")));
    }

    /** Who issues this store's tokens: what it records for a resource on its first grant, and checks on every later one. */
    public TokenIssuer tokenIssuer() {
        return tokens.issuer();
    }

    /** The key layout this store reads and writes; {@link RedisKeys#DEFAULT} unless a prefix was set. */
    public RedisKeys keys() {
        return keys;
    }

    @Override
    public Optional<Lease> tryAcquire(String resource, Duration ttl) {
        LeaseArguments.requireValidResource(resource);
        LeaseArguments.requireValidTtl(ttl);
        return tokens.acquireObserved(context, resource, ttl, context.newOwnerId());
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
        return tokens.switchIssuer(context, resource, highestIssued);
    }

    @Override
    public void observeStoredFence(String resource, long storedFence) {
        tokens.observeStoredFence(context, resource, storedFence);
    }

    /** Checks that Redis answers, for health checks; returns how long the round trip took. */
    public Duration ping() {
        return calls.ping();
    }

    /** The Redis server's version (INFO server, {@code redis_version}), for reports and health details; "unknown" if it says none. */
    public String serverVersion() {
        return calls.serverVersion();
    }

    /**
     * Raises the resource's counter to at least {@code floor} and returns its value; never lowers
     * it. For seeding a counter from a database before first use.
     *
     * <p>Creates a missing counter only for a resource that never had a token issued, as far as
     * can be told: Redis records no issuer and no epoch for it, and this store has seen none of
     * its tokens. Otherwise the counter was lost after tokens were issued, and seeding it from the
     * stored fences would issue again the tokens granted above them; it is left missing, for the
     * next acquisition to reseed from the {@link TokenPolicy#redisCounter(dev.fenced.FenceFloor) fence floor},
     * with its margin. Limit: Redis that lost every key of the resource (a restart without
     * persistence, FLUSHALL) looks like a new resource to a store that saw none of its tokens; call
     * this only before first use, and give the store a fence floor.
     *
     * @throws CounterLostException when the counter is missing after tokens were issued; nothing changed
     * @throws IllegalStateException for a store with token epochs
     */
    public long raiseCounter(String resource, long floor) {
        LeaseArguments.requireValidResource(resource);
        return tokens.raiseCounter(context, resource, floor);
    }

    /** How many resources' highest tokens this store remembers now; for tests of the bound. */
    int resourcesRemembered() {
        return context.resourcesRemembered();
    }

    /**
     * What Redis holds for a resource now, under this store's keys: the holder's owner id, its time
     * left, the counter, the issuer recorded for its tokens and the highest token it shows issued.
     */
    public LeaseSnapshot inspect(String resource) {
        return ResourceRecords.inspect(calls, keys, resource);
    }

    @Override
    public LeaseView view(String resource) {
        LeaseSnapshot snapshot = inspect(LeaseArguments.requireValidResource(resource));
        return new LeaseView(resource, snapshot.holder(), snapshot.timeLeft(), snapshot.highestTokenIssued());
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
        return ResourceRecords.forget(calls, keys, resource);
    }

    /** Closes the store's own connection (and client); a connection or client the caller passed in stays open. */
    @Override
    public void close() {
        link.close().run();
    }

    @Override
    public String toString() {
        return "RedisLeaseStore[" + link.errors().server() + (keys.prefix().isEmpty() ? "" : ", key prefix " + keys.prefix()) + "]";
    }

    /** Configures a {@link RedisLeaseStore}; {@link #build()} connects and fails fast. */
    public static final class Builder {
        private final RedisClientAdapter adapter;
        private TokenPolicy tokens; // null until chosen: the plain Redis counter
        private String ownerLabel;
        private Duration commandTimeout = Duration.ofSeconds(5);
        private int tokensRemembered = DEFAULT_TOKENS_REMEMBERED;
        private RedisKeys keys = RedisKeys.DEFAULT;
        private CommandListener commandListener;
        private FencedObserver observer = FencedObserver.NONE;
        private ClientResources clientResources;
        private ClientOptions clientOptions;
        private RedisTls tls;

        private Builder(RedisClientAdapter adapter) {
            this.adapter = adapter;
        }

        /**
         * Puts {@code prefix} before every key, e.g. {@code "app1:"} for {@code app1:lock:{resource}},
         * so that applications sharing one Redis keep apart leases and counters of resources with the
         * same name. Without it the keys are those stores have always used. Stores exclude each other
         * only under one prefix: while a deployment changes it, old and new processes can hold the
         * same resource at once (the fence still holds), and the new counter starts over (give the
         * store a {@link TokenPolicy#redisCounter(dev.fenced.FenceFloor) fence floor}).
         *
         * @throws IllegalArgumentException when {@link RedisKeys#withPrefix(String)} refuses the prefix
         */
        public Builder keyPrefix(String prefix) {
            this.keys = RedisKeys.withPrefix(prefix);
            return this;
        }

        /**
         * Who issues the tokens; {@link TokenPolicy#redisCounter()} (no floor) unless set. Chosen
         * once: a second choice would silently replace the first, and tokens of different policies
         * do not order.
         *
         * @throws IllegalStateException when a policy was chosen already
         */
        public Builder tokens(TokenPolicy policy) {
            Objects.requireNonNull(policy, "policy");
            if (tokens != null) {
                throw new IllegalStateException("tokens already come from " + tokens + "; a store has one token policy, not " + policy);
            }
            this.tokens = policy;
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

        /** A readable prefix for owner ids (e.g. a worker name), shown by status tools. */
        public Builder ownerLabel(String ownerLabel) {
            this.ownerLabel = LeaseArguments.requireValidResource(ownerLabel);
            return this;
        }

        /**
         * How long one command may take before it fails with {@link dev.fenced.StoreUnavailableException}; 5 s
         * by default. Not for a store on the caller's connection, which keeps its own timeout.
         */
        public Builder commandTimeout(Duration commandTimeout) {
            requireOwnClient("timeout; set it on the client's RedisURI (RedisURI.setTimeout)");
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
            requireOwnClient("client resources");
            this.clientResources = Objects.requireNonNull(clientResources, "clientResources");
            return this;
        }

        /**
         * Lettuce's client options: TLS ({@code SslOptions}), socket and timeout options,
         * reconnection. The command timeout stays {@link #commandTimeout(Duration)}'s. Not for a
         * store on the caller's connection.
         */
        public Builder clientOptions(ClientOptions clientOptions) {
            requireOwnClient("client options");
            this.clientOptions = Objects.requireNonNull(clientOptions, "clientOptions");
            return this;
        }

        /**
         * Certificates to trust, this client's certificate and how much to verify, for a
         * {@code rediss://} URL. A failed handshake is a {@link StoreTlsException}.
         */
        public Builder tls(RedisTls tls) {
            requireOwnClient("TLS settings");
            this.tls = Objects.requireNonNull(tls, "tls");
            return this;
        }

        private void requireOwnClient(String what) {
            if (!adapter.ownsClient()) {
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
         * @throws dev.fenced.StoreUnavailableException when Redis cannot be reached
         * @throws UnsupportedLettuceVersionException when the class path's Lettuce is outside {@value LettuceVersion#SUPPORTED}
         */
        public RedisLeaseStore build() {
            return new RedisLeaseStore(this);
        }
    }
}
