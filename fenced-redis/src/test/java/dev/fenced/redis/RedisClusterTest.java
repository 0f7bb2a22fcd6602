package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.Lease;
import dev.fenced.embedded.EmbeddedRedisCluster;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The lease contract on a Redis Cluster of 3 primaries and 3 replicas ({@code redis-cluster://}),
 * real {@code redis-server} processes. A resource's lease and counter share a hash tag, so the
 * one script runs on the one node that owns them. Then that node's primary dies: its replica is
 * promoted, and the same store, without a rebuild, finds it and grants the next lease with a
 * greater token. The test waits for the replica to have the counter ({@code WAIT}); a lagging
 * replica is the fence's case (RELIABILITY.md).
 */
class RedisClusterTest extends RedisStoreContract {
    private static EmbeddedRedisCluster cluster;
    private static RedisLeaseStore store;

    @BeforeAll
    static void start() {
        cluster = EmbeddedRedisCluster.start();
        store = RedisLeaseStore.builder(cluster.uri()).commandTimeout(Duration.ofSeconds(2)).build();
    }

    @AfterAll
    static void stop() {
        if (store != null) {
            store.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Override
    protected RedisLeaseStore redisStore() {
        return store;
    }

    @Test
    void resourcesSpreadOverThePrimariesAndEachKeepsItsOwnCounter() {
        Set<Integer> primaries = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            String resource = freshResource();
            Lease lease = store.tryAcquire(resource, Duration.ofSeconds(5)).orElseThrow();
            assertThat(lease.token()).isEqualTo(1);
            primaries.add(cluster.primaryOf(SlotHash.getSlot(store.keys().lockKey(resource))));
            assertThat(SlotHash.getSlot(store.keys().fenceKey(resource))).isEqualTo(SlotHash.getSlot(store.keys().lockKey(resource)));
            lease.release();
        }
        assertThat(primaries).as("30 resources land on all three primaries").hasSize(3);
    }

    @Test
    void theStoreFollowsAPrimaryFailoverAndTokensKeepGrowing() throws Exception {
        String resource = freshResource();
        javax.sql.DataSource db = dev.fenced.testing.servers.TestDatabases.postgres();
        dev.fenced.jdbc.FencedSchema.migrate(db);
        // Beside it, a store with token epochs on the same slot (another key prefix, the same hash tag).
        try (RedisLeaseStore epochs = RedisLeaseStore.builder(cluster.uri()).commandTimeout(Duration.ofSeconds(2)).keyPrefix("epochs:")
                .tokens(TokenPolicy.epochs(dev.fenced.jdbc.JdbcSequenceTokenSource.epochs(db))).build()) {
            long before = Failovers.tokenOnce(store, resource);
            long epochBefore = Failovers.tokenOnce(epochs, resource);
            int slot = SlotHash.getSlot(store.keys().lockKey(resource));
            assertThat(SlotHash.getSlot(epochs.keys().lockKey(resource))).isEqualTo(slot);
            int primary = cluster.primaryOf(slot);
            Failovers.awaitReplica(primary);
            cluster.stopNode(primary);
            Lease after = Failovers.leaseAfterFailover(store, resource);
            assertThat(after.token()).isGreaterThan(before);
            assertThat(cluster.primaryOf(slot)).as("the replica took over the slot").isNotEqualTo(primary);
            after.release();
            Lease epochAfter = Failovers.leaseAfterFailover(epochs, resource);
            assertThat(epochAfter.token() >>> 24).as("the slot is on another redis-server process: a new epoch").isGreaterThan(epochBefore >>> 24);
            epochAfter.release();
        }
    }

    @Test
    void badClusterUrlsAreRefusedBeforeConnecting() {
        assertThatThrownBy(() -> RedisLeaseStore.builder("redis-cluster://127.0.0.1:1,,127.0.0.1:2").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("malformed Redis Cluster URL");
        assertThatThrownBy(() -> RedisLeaseStore.builder("redis-cluster://:s3cret@127.0.0.1:7000/3").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("only database 0")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3cret"));
    }
}
