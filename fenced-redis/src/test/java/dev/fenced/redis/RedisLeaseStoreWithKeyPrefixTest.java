package dev.fenced.redis;

import dev.fenced.LeaseStore;
import dev.fenced.testing.LeaseStoreContract;
import dev.fenced.testing.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The lease contract for a store whose keys carry a prefix: every script must get the prefixed keys. */
class RedisLeaseStoreWithKeyPrefixTest extends LeaseStoreContract {
    private static RedisLeaseStore store;
    private static RedisClient adminClient;
    private static StatefulRedisConnection<String, String> admin;

    @BeforeAll
    static void connect() {
        store = RedisLeaseStore.builder(TestRedis.uri()).keyPrefix("fenced-test-contract:").build();
        adminClient = RedisClient.create(TestRedis.uri());
        admin = adminClient.connect();
    }

    @AfterAll
    static void disconnect() {
        store.close();
        admin.close();
        adminClient.shutdown();
    }

    @Override
    protected LeaseStore store() {
        return store;
    }

    @Override
    protected void expireLeaseBehindItsBack(String resource) {
        // Deleting the prefixed key ends the lease only if the store keeps it there.
        admin.sync().del(store.keys().lockKey(resource));
    }

    @Override
    protected Duration timeLeft(String resource) {
        return store.inspect(resource).timeLeft();
    }
}
