package dev.fenced.redis;

import static dev.fenced.redis.PolicyContext.LOG;

import dev.fenced.CounterLostException;
import dev.fenced.FenceFloor;
import dev.fenced.Lease;
import dev.fenced.LogKeys;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.MDC;

/**
 * {@link TokenPolicy#redisCounter}: Redis's counter beside the lease, both taken by
 * {@link RedisScripts#ACQUIRE} in one round trip; a counter found missing or behind a token this
 * store saw is reseeded from the {@link FenceFloor} (with a margin), or reported lost without one.
 * Does not guarantee that a failover to a lagging replica, or a fresh process after a loss, never
 * repeats a token: only the floor's stored fences and this store's memory stand against that.
 */
final class RedisCounter extends TokenPolicy {
    /** Null: no floor, a loss this store saw is {@link CounterLostException}. */
    private final FenceFloor floor;
    private final long reseedMargin;

    RedisCounter(FenceFloor floor, long reseedMargin) {
        super(TokenIssuer.REDIS);
        this.floor = floor;
        this.reseedMargin = reseedMargin;
    }

    @Override
    Optional<Lease> acquire(PolicyContext store, String resource, Duration ttl, String ownerId) {
        RedisKeys keys = store.keys;
        String[] resourceKeys = {keys.lockKey(resource), keys.fenceKey(resource), keys.issuerKey(resource)};
        long seen = TokenOutOfRangeException.requireCountable(resource, "the highest token seen", store.highestSeen(resource));
        long reply = acquire(store, resourceKeys, ownerId, ttl, "", seen);
        if (reply == RedisScripts.NEED_FLOOR) {
            long highestStored = floor.highestStoredFence(resource);
            if (highestStored < 0) {
                throw new IllegalStateException("fence floor for '" + resource + "' is negative: " + highestStored);
            }
            // A resource with no stored fence starts at 1; one with fences was in use, so tokens may
            // have been issued above its floor that no row shows yet.
            TokenOutOfRangeException.requireCountable(resource, "the fence floor", highestStored);
            long reseedTo = TokenOutOfRangeException.requireCountable(resource, "the counter reseeded from the fence floor",
                    highestStored == 0 ? 0 : Math.addExact(highestStored, reseedMargin));
            reply = acquire(store, resourceKeys, ownerId, ttl, Long.toString(reseedTo), seen);
            if (reply > 0 && highestStored > 0) { // a floor of 0 is a resource never written: a first counter, not a lost one
                try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource);
                     MDC.MDCCloseable t = MDC.putCloseable(LogKeys.TOKEN, Long.toString(reply))) {
                    LOG.warn("counter of {} was missing in Redis; reseeded above the highest stored fence {} to {}",
                            resource, highestStored, reseedTo);
                }
                store.observer.counterReseeded(resource, highestStored, reseedTo);
            }
        }
        if (reply == RedisScripts.HELD) {
            return Optional.empty();
        }
        if (reply == RedisScripts.OTHER_ISSUER) {
            throw store.otherIssuer(resource, store.calls.call(redis -> redis.get(resourceKeys[2])));
        }
        if (reply == RedisScripts.COUNTER_LOST) {
            LOG.error("counter of {} is gone from Redis after this client saw token {}, and no fence floor is configured"
                    + " to reseed it from; refusing to issue a token that could repeat", resource, seen);
            throw new CounterLostException(resource, seen);
        }
        if (reply >= TokenOutOfRangeException.LIMIT - 1) {
            // A counter already stored that high (by hand, or before this check): its INCR was not exact. Let go of the lease.
            store.calls.script(RedisScripts.RELEASE, new String[] {resourceKeys[0]}, ownerId);
            throw new TokenOutOfRangeException(resource, "the token from Redis's counter", reply);
        }
        store.saw(resource, reply);
        return Optional.of(store.grant(resource, reply, ownerId));
    }

    /** The token, or one of {@link RedisScripts#HELD}, {@code COUNTER_LOST}, {@code NEED_FLOOR}, {@code OTHER_ISSUER}. */
    private long acquire(PolicyContext store, String[] resourceKeys, String ownerId, Duration ttl, String reseedTo, long seen) {
        return store.calls.script(RedisScripts.ACQUIRE, resourceKeys, ownerId, Long.toString(ttl.toMillis()), reseedTo,
                floor == null ? "0" : "1", Long.toString(seen), issuer().recorded());
    }

    @Override
    void observeStoredFence(PolicyContext store, String resource, long storedFence) {
        if (storedFence <= 0) {
            return;
        }
        TokenOutOfRangeException.requireCountable(resource, "the stored fence to raise the counter above", storedFence);
        long before = store.calls.script(RedisScripts.RAISE_COUNTER, store.counterKeys(resource), Long.toString(storedFence), "0");
        if (before < 0) {
            try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource)) {
                LOG.warn("counter of {} is missing in Redis; not recreated from the stored fence {}, above which tokens may"
                        + " have been issued: the next acquisition reseeds it from the fence floor or reports it lost",
                        resource, storedFence);
            }
        } else if (before < storedFence) {
            counterRaised(store, resource, before, storedFence);
        }
    }

    @Override
    long raiseCounter(PolicyContext store, String resource, long floor) {
        return raiseRedisCounter(store, resource, floor);
    }

    /** The next INCR is above every token the old issuer handed out. */
    @Override
    String counterAfterSwitch(long highestIssued) {
        return Long.toString(highestIssued);
    }

    @Override
    public String toString() {
        return "TokenPolicy.redisCounter(" + (floor == null ? "no floor" : "floor " + floor + ", margin " + reseedMargin) + ")";
    }
}
