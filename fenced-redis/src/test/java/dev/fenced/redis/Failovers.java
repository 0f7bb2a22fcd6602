package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fenced.Lease;
import dev.fenced.StoreUnavailableException;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.Optional;

/** What the Sentinel and Cluster failover tests share: a token taken and replicated, then the lease taken again after the kill. */
final class Failovers {
    private Failovers() {
    }

    /** Takes and releases a lease on {@code resource}; returns its token. */
    static long tokenOnce(RedisLeaseStore store, String resource) {
        return store.tryAcquire(resource, Duration.ofSeconds(5)).map(lease -> {
            lease.release();
            return lease.token();
        }).orElseThrow();
    }

    /** Waits until the primary on {@code port} has sent its writes to a replica ({@code WAIT 1}). */
    static void awaitReplica(int port) {
        try (RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
             StatefulRedisConnection<String, String> direct = client.connect()) {
            assertThat(direct.sync().waitForReplication(1, 5_000)).as("the replica has the counter").isEqualTo(1);
        }
    }

    /** The next lease on {@code resource}, retried while the store cannot answer (no primary yet, or not found yet). */
    static Lease leaseAfterFailover(RedisLeaseStore store, String resource) {
        // StoreUnavailable while the replica is not promoted yet, or the store has not seen it
        return await("a lease from the promoted replica").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .ignoreException(StoreUnavailableException.class)
                .until(() -> store.tryAcquire(resource, Duration.ofSeconds(5)), Optional::isPresent).get();
    }
}
