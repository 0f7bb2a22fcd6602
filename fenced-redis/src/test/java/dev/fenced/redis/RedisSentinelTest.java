package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.Lease;
import dev.fenced.embedded.EmbeddedRedisFailoverGroup;
import java.time.Duration;
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
class RedisSentinelTest extends RedisStoreContract {
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
    protected RedisLeaseStore redisStore() {
        return store;
    }

    @Test
    void theStoreFollowsAFailoverAndTokensKeepGrowing() throws Exception {
        String resource = freshResource();
        long before = Failovers.tokenOnce(store, resource);
        int primary = group.primaryPort();
        Failovers.awaitReplica(primary);
        group.stopNode(primary);
        try {
            Lease after = Failovers.leaseAfterFailover(store, resource);
            assertThat(after.token()).isGreaterThan(before);
            assertThat(group.primaryPort()).as("the Sentinel promoted the other node").isNotEqualTo(primary);
            after.release();
        } finally {
            group.startNode(primary);
        }
    }

}
