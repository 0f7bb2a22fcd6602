package dev.fenced.redis;

import dev.fenced.CounterLostException;
import dev.fenced.EpochSource;
import dev.fenced.FenceFloor;
import dev.fenced.FencedObserver.AcquireOutcome;
import dev.fenced.Lease;
import dev.fenced.LogKeys;
import dev.fenced.TokenSource;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.MDC;

/**
 * Who issues a {@link RedisLeaseStore}'s fencing tokens, given to {@link RedisLeaseStore.Builder#tokens}:
 * <ul>
 * <li>{@link #redisCounter(FenceFloor)}: Redis's counter beside the lease, one round trip; a lost
 *     counter is reseeded above the highest stored fence plus a margin (without a floor, a loss
 *     this store saw is refused with {@link dev.fenced.CounterLostException});</li>
 * <li>{@link #epochs(EpochSource)}: Redis's counter in epochs from a durable source; tokens never
 *     repeat or go back whatever Redis loses, a failover to a lagging replica included;</li>
 * <li>{@link #durable(TokenSource)}: every token from a durable source, a second round trip;
 *     Redis keeps only the lease.</li>
 * </ul>
 *
 * <p>Each policy acquires, observes stored fences and raises the counter in its own way, and
 * records its {@link #issuer()} for a resource on the first grant. Immutable and thread-safe; one
 * policy may serve several stores. Does not make tokens of different policies order: a store
 * refuses a resource another policy issues for ({@link dev.fenced.TokenIssuerMismatchException})
 * until it is {@link RedisLeaseStore#switchTokenIssuer switched}.
 */
public abstract sealed class TokenPolicy permits RedisCounter, TokenEpochs, DurableTokens {
    /** How far above a non-zero floor a lost counter is reseeded unless told otherwise. */
    public static final long DEFAULT_RESEED_MARGIN = 1_000_000;

    private final TokenIssuer issuer;

    TokenPolicy(TokenIssuer issuer) {
        this.issuer = issuer;
    }

    /** Redis's own counter with no floor: a loss this store saw is refused, a loss it did not see starts over at 1. */
    public static TokenPolicy redisCounter() {
        return new RedisCounter(null, DEFAULT_RESEED_MARGIN);
    }

    /** Redis's own counter, reseeded from {@code floor} with {@link #DEFAULT_RESEED_MARGIN} when lost; see {@link FenceFloor}. */
    public static TokenPolicy redisCounter(FenceFloor floor) {
        return redisCounter(floor, DEFAULT_RESEED_MARGIN);
    }

    /**
     * Redis's own counter, reseeded from {@code floor} when lost, {@code reseedMargin} above a
     * non-zero floor. A floor read from the rows cannot see tokens that were issued but never
     * written; the margin keeps a reseeded counter above those too, as long as fewer were issued
     * since the last write.
     *
     * @throws IllegalArgumentException for a negative margin
     */
    public static TokenPolicy redisCounter(FenceFloor floor, long reseedMargin) {
        if (reseedMargin < 0) {
            throw new IllegalArgumentException("reseed margin must not be negative, got " + reseedMargin);
        }
        return new RedisCounter(Objects.requireNonNull(floor, "floor"), reseedMargin);
    }

    /** Every token from a durable source (e.g. a database sequence); Redis keeps only the lease. */
    public static TokenPolicy durable(TokenSource source) {
        return new DurableTokens(Objects.requireNonNull(source, "source"));
    }

    /**
     * Redis issues the tokens, in epochs drawn from a durable source (e.g.
     * {@code JdbcSequenceTokenSource.epochs(dataSource)}, one {@code nextval} each). A new epoch is
     * drawn for a resource the first time it is acquired and whenever Redis may have lost its
     * tokens: the resource's keys found on another redis-server process or replication history
     * than the one its epoch began on (a restart, a failover to a replica however far behind, a
     * resharding), or its counter or epoch key gone (FLUSHALL, eviction). Tokens then never repeat
     * or go back, whatever Redis loses, and the usual acquisition stays one round trip. What epochs
     * cannot order is two primaries at once (a split brain: an old primary still serving a client
     * cut off from the failover, or brought back empty as a primary): each issues its own tokens,
     * which never repeat the other's but can be below them, as its leases overlap the other's; the
     * fence refuses the writes of the lower. For tokens that rise even then, use {@link #durable}. No fence
     * floor is needed. A token is {@code epoch << 24 | counter}: 2^39 epochs (every resource's
     * first acquisition and each loss use one) of 2^24 tokens (past them, a new epoch). Needs Redis 5 or later.
     */
    public static TokenPolicy epochs(EpochSource epochs) {
        return new TokenEpochs(Objects.requireNonNull(epochs, "epochs"));
    }

    /** Who issues under this policy: what a store records for a resource on its first grant, and checks on every later one. */
    public final TokenIssuer issuer() {
        return issuer;
    }

    /** {@link #acquire}, each outcome told to the store's observer with the time it took. */
    final Optional<Lease> acquireObserved(PolicyContext store, String resource, Duration ttl, String ownerId) {
        long started = System.nanoTime();
        Optional<Lease> lease;
        try {
            lease = acquire(store, resource, ttl, ownerId);
        } catch (RuntimeException e) {
            store.observer.acquired(resource, AcquireOutcome.ERROR, 0, Duration.ofNanos(System.nanoTime() - started));
            throw e;
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        if (lease.isPresent()) {
            store.observer.acquired(resource, AcquireOutcome.GRANTED, lease.get().token(), took);
        } else {
            store.observer.acquired(resource, AcquireOutcome.BUSY, 0, took);
        }
        return lease;
    }

    /** See {@link RedisLeaseStore#switchTokenIssuer}: records this policy's issuer and leaves the counter it starts from. */
    final boolean switchIssuer(PolicyContext store, String resource, long highestIssued) {
        if (highestIssued < 0) {
            throw new IllegalArgumentException("highest token issued must not be negative, got " + highestIssued);
        }
        RedisKeys keys = store.keys;
        boolean switched = store.calls.script(RedisScripts.SWITCH_ISSUER, new String[] {keys.lockKey(resource), keys.fenceKey(resource),
            keys.epochKey(resource), keys.issuerKey(resource), keys.epochTicketKey(resource)}, issuer.recorded(),
                counterAfterSwitch(highestIssued)) == 1;
        if (switched) {
            try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource)) {
                PolicyContext.LOG.warn("tokens of {} now come from {}, above {}", resource, issuer.recorded(), highestIssued);
            }
        }
        return switched;
    }

    /** A lease with its token, empty when another holds the resource; records or checks the issuer. */
    abstract Optional<Lease> acquire(PolicyContext store, String resource, Duration ttl, String ownerId);

    /** Keeps the next token above a fence a write found stored; see {@link dev.fenced.LeaseStore#observeStoredFence}. */
    abstract void observeStoredFence(PolicyContext store, String resource, long storedFence);

    /** See {@link RedisLeaseStore#raiseCounter}. */
    abstract long raiseCounter(PolicyContext store, String resource, long floor);

    /** The counter {@link RedisScripts#SWITCH_ISSUER} leaves for this policy after {@code highestIssued}, '' for none. */
    abstract String counterAfterSwitch(long highestIssued);

    /**
     * The epoch a token of {@link #epochs epochs} belongs to ({@code token >>> 24}): an epoch source
     * raised above {@code epochOf(t)} issues only tokens above {@code t}.
     */
    public static long epochOf(long token) {
        return token >>> TokenEpochs.EPOCH_SHIFT;
    }

    /** Logs and reports a counter that was behind a stored fence and was raised above it. */
    static void counterRaised(PolicyContext store, String resource, long before, long storedFence) {
        try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource)) {
            PolicyContext.LOG.warn("counter of {} was behind a stored fence (at {}, fence {}); raised so the next token is above it",
                    resource, before, storedFence);
        }
        store.observer.counterRaised(resource, storedFence);
    }

    /** {@link RedisScripts#RAISE_COUNTER} on Redis's counter, for the policies that may seed one. */
    static long raiseRedisCounter(PolicyContext store, String resource, long floor) {
        if (floor < 0) {
            throw new IllegalArgumentException("counter floor must not be negative, got " + floor);
        }
        TokenOutOfRangeException.requireCountable(resource, "the floor to raise the counter to", floor);
        long seen = store.highestSeen(resource);
        long before = store.calls.script(RedisScripts.RAISE_COUNTER, store.counterKeys(resource), Long.toString(floor), seen == 0 ? "1" : "0");
        if (before < 0) {
            throw new CounterLostException(resource, Math.max(seen, floor));
        }
        return Math.max(before, floor);
    }
}
