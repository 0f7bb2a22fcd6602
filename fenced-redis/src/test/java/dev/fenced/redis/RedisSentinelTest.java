package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.Lease;
import dev.fenced.LeaseStore;
import dev.fenced.StoreUnavailableException;
import dev.fenced.embedded.EmbeddedRedisFailoverGroup;
import dev.fenced.testing.LeaseStoreContract;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The lease contract through a Sentinel ({@code redis-sentinel://host:port#master}): a primary, a
 * replica and a Sentinel, all real {@code redis-server} processes. Then the primary dies: the
 * Sentinel promotes the replica and the same store, without being rebuilt, grants the next lease
 * from it with a greater token. The counter survives because the test waits for the replica to
 * have it ({@code WAIT}); a failover to a replica that lags is the fence's case (RELIABILITY.md).
 */
class RedisSentinelTest extends LeaseStoreContract {
    private static EmbeddedRedisFailoverGroup group;
    private static RedisLeaseStore store;

    @BeforeAll
    static void start() {
        group = EmbeddedRedisFailoverGroup.start();
        store = RedisLeaseStore.builder(group.sentinelUri()).commandTimeout(Duration.ofSeconds(2)).build();
    }

    @AfterAll
    static void stop() {
        if (store != null) {
            store.close();
        }
        if (group != null) {
            group.close();
        }
    }

    @Override
    protected LeaseStore store() {
        return store;
    }

    @Override
    protected void expireLeaseBehindItsBack(String resource) {
        store.forget(resource);
    }

    @Test
    void theStoreFollowsAFailoverAndTokensKeepGrowing() throws Exception {
        String resource = freshResource();
        long before = store.tryAcquire(resource, Duration.ofSeconds(5)).map(lease -> {
            lease.release();
            return lease.token();
        }).orElseThrow();
        int primary = primaryPort();
        try (RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", primary));
             StatefulRedisConnection<String, String> direct = client.connect()) {
            assertThat(direct.sync().waitForReplication(1, 5_000)).as("the replica has the counter").isEqualTo(1);
        }
        group.stopNode(primary);
        try {
            Optional<Lease> after = Optional.empty();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (after.isEmpty() && System.nanoTime() < deadline) {
                try {
                    after = store.tryAcquire(resource, Duration.ofSeconds(5));
                } catch (StoreUnavailableException e) {
                    Thread.sleep(200); // the Sentinel has not promoted the replica yet
                }
            }
            assertThat(after).as("a lease from the promoted replica within 60 s").isPresent();
            assertThat(after.get().token()).isGreaterThan(before);
            assertThat(primaryPort()).as("the Sentinel promoted the other node").isNotEqualTo(primary);
            after.get().release();
        } finally {
            group.startNode(primary);
        }
    }

    private static int primaryPort() {
        try (RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", group.sentinelPort()));
             StatefulRedisSentinelConnection<String, String> sentinel = client.connectSentinel()) {
            return ((InetSocketAddress) sentinel.sync().getMasterAddrByName(EmbeddedRedisFailoverGroup.MASTER_NAME)).getPort();
        }
    }
}
