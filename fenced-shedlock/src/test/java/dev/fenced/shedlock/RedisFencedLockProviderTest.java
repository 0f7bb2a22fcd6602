package dev.fenced.shedlock;

import dev.fenced.LeaseStore;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.testing.servers.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The bridge on a real Redis (FENCED_REDIS_URL, or an embedded one). */
class RedisFencedLockProviderTest extends FencedLockProviderContract {
    private static RedisLeaseStore store;

    @BeforeAll
    static void connect() {
        store = RedisLeaseStore.builder(TestRedis.uri()).build();
    }

    @AfterAll
    static void close() {
        store.close();
    }

    @Override
    protected LeaseStore store() {
        return store;
    }
}
