package dev.fenced.redis;

import dev.fenced.LeaseStore;
import dev.fenced.testing.LeaseStoreContract;
import java.time.Duration;

/** The lease contract for a {@link RedisLeaseStore} on any deployment: a lease expires behind its holder's back by {@link RedisLeaseStore#forget}. */
abstract class RedisStoreContract extends LeaseStoreContract {

    /** The store under test, on the deployment the subclass starts. */
    protected abstract RedisLeaseStore redisStore();

    @Override
    protected final LeaseStore store() {
        return redisStore();
    }

    @Override
    protected void expireLeaseBehindItsBack(String resource) {
        redisStore().forget(resource);
    }

    @Override
    protected Duration timeLeft(String resource) {
        return redisStore().inspect(resource).timeLeft();
    }
}
