package dev.fenced.redis;

import dev.fenced.FencedObserver;
import dev.fenced.FencedObserver.RenewalOutcome;
import dev.fenced.Lease;
import dev.fenced.LeaseArguments;
import java.time.Duration;

/** A lease granted by {@link RedisLeaseStore}; renew and release check the owner id in Redis. */
final class RedisLease implements Lease {
    private final String resource;
    private final long token;
    private final String ownerId;
    private final String lockKey;
    private final RedisCalls calls;
    private final FencedObserver observer;

    RedisLease(String resource, long token, String ownerId, String lockKey, RedisCalls calls, FencedObserver observer) {
        this.resource = resource;
        this.token = token;
        this.ownerId = ownerId;
        this.lockKey = lockKey;
        this.calls = calls;
        this.observer = observer;
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
        boolean renewed;
        try {
            renewed = calls.script(RedisScripts.RENEW, new String[] {lockKey}, ownerId, Long.toString(ttl.toMillis())) == 1;
        } catch (RuntimeException e) {
            observer.renewed(resource, token, RenewalOutcome.ERROR);
            throw e;
        }
        observer.renewed(resource, token, renewed ? RenewalOutcome.RENEWED : RenewalOutcome.LOST);
        return renewed;
    }

    @Override
    public boolean isHeld() {
        return ownerId.equals(calls.call(redis -> redis.get(lockKey)));
    }

    @Override
    public boolean release() {
        return calls.script(RedisScripts.RELEASE, new String[] {lockKey}, ownerId) == 1;
    }

    @Override
    public String toString() {
        return "Lease[" + resource + ", token " + token + ", owner " + ownerId + "]";
    }
}
