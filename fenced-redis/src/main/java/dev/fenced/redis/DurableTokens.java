package dev.fenced.redis;

import dev.fenced.Lease;
import dev.fenced.TokenSource;
import java.time.Duration;
import java.util.Optional;

/**
 * {@link TokenPolicy#durable}: the lease alone in Redis ({@link RedisScripts#ACQUIRE_LEASE_ONLY}),
 * then the token from a durable {@link TokenSource}, a second round trip. Tokens survive anything
 * Redis loses; the lease does not. Does not guarantee that the token is drawn while the lease is
 * still live (see {@link TokenSource}): the fence still holds.
 */
final class DurableTokens extends TokenPolicy {
    private final TokenSource source;

    DurableTokens(TokenSource source) {
        super(TokenIssuer.SOURCE);
        this.source = source;
    }

    @Override
    Optional<Lease> acquire(PolicyContext store, String resource, Duration ttl, String ownerId) {
        String lockKey = store.keys.lockKey(resource);
        String issuerKey = store.keys.issuerKey(resource);
        long granted = store.calls.script(RedisScripts.ACQUIRE_LEASE_ONLY, new String[] {lockKey, issuerKey}, ownerId,
                Long.toString(ttl.toMillis()), issuer().recorded());
        if (granted == RedisScripts.OTHER_ISSUER) {
            throw store.otherIssuer(resource, store.calls.call(redis -> redis.get(issuerKey)));
        }
        if (granted == RedisScripts.HELD) {
            return Optional.empty();
        }
        long token;
        try {
            token = source.nextToken(resource);
        } catch (RuntimeException e) {
            // No token, no lease: the next holder need not wait out a lease nobody can use.
            try {
                store.calls.script(RedisScripts.RELEASE, new String[] {lockKey}, ownerId);
            } catch (RuntimeException releaseFailed) {
                e.addSuppressed(releaseFailed); // the source's failure is the one to report; the lease runs out by its TTL
            }
            throw e;
        }
        return Optional.of(store.grant(resource, token, ownerId));
    }

    /** The source is above every stored fence already: it issued them. */
    @Override
    void observeStoredFence(PolicyContext store, String resource, long storedFence) {
    }

    /** Seeds Redis's counter as {@link RedisCounter} does, for a resource later switched back to it. */
    @Override
    long raiseCounter(PolicyContext store, String resource, long floor) {
        return raiseRedisCounter(store, resource, floor);
    }

    /** The source needs no counter; the caller raised it above {@code highestIssued} before the switch. */
    @Override
    String counterAfterSwitch(long highestIssued) {
        return "";
    }

    @Override
    public String toString() {
        return "TokenPolicy.durable(" + source + ")";
    }
}
