package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fenced.EpochSource;
import dev.fenced.Lease;
import dev.fenced.StoreUnavailableException;
import dev.fenced.embedded.EmbeddedRedis;
import dev.fenced.embedded.EmbeddedRedisFailoverGroup;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.testing.servers.TestDatabases;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Token epochs: whatever Redis loses, the next token is above every token issued before, taken by
 * a fresh process that remembers nothing (another worker). Each loss is played on real
 * {@code redis-server} processes with epochs drawn from PostgreSQL's {@code fence_epoch_seq}, and
 * each has its negative control: the same loss without epochs hands out a token already issued.
 * The loss that matters most is a failover to a replica that lags: the primary goes on issuing
 * tokens the replica never receives, dies, and the Sentinel promotes the replica.
 */
class RedisTokenEpochsTest {
    private static DataSource db;

    @BeforeAll
    static void migrate() {
        db = TestDatabases.postgres();
        FencedSchema.migrate(db);
    }

    private static String freshResource() {
        return "epoch-" + UUID.randomUUID();
    }

    private static EpochSource epochs() {
        return JdbcSequenceTokenSource.epochs(db);
    }

    private static RedisLeaseStore store(String uri, boolean withEpochs) {
        RedisLeaseStore.Builder builder = RedisLeaseStore.builder(uri).commandTimeout(Duration.ofSeconds(2));
        return (withEpochs ? builder.tokens(TokenPolicy.epochs(epochs())) : builder).build();
    }

    /** Five leases taken and released; their tokens, rising. */
    private static List<Long> tokens(RedisLeaseStore store, String resource) {
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            tokens.add(Failovers.tokenOnce(store, resource));
        }
        assertThat(tokens).isSorted().doesNotHaveDuplicates();
        return tokens;
    }

    /** Tokens before a loss, then the first token a fresh store gets after it. */
    private static long[] acrossALoss(EmbeddedRedis redis, boolean withEpochs, Runnable loss) {
        String resource = freshResource();
        long highestBefore;
        try (RedisLeaseStore before = store(redis.uri(), withEpochs)) {
            highestBefore = tokens(before, resource).get(4);
        }
        loss.run();
        try (RedisLeaseStore fresh = store(redis.uri(), withEpochs)) {
            return new long[] {highestBefore, Failovers.tokenOnce(fresh, resource)};
        }
    }

    @Test
    void aFlushAllOrARestartNeverBringsATokenBack() {
        try (EmbeddedRedis redis = EmbeddedRedis.start(); RedisClient client = RedisClient.create(redis.uri())) {
            Runnable flushAll = () -> {
                try (StatefulRedisConnection<String, String> direct = client.connect()) {
                    direct.sync().flushall();
                }
            };
            for (Runnable loss : List.of(flushAll, redis::restart)) {
                long[] safe = acrossALoss(redis, true, loss);
                assertThat(safe[1]).as("with epochs, after the loss").isGreaterThan(safe[0]);
                long[] control = acrossALoss(redis, false, loss);
                assertThat(control[1]).as("negative control: without epochs or a floor the token comes back").isLessThanOrEqualTo(control[0]);
            }
        }
    }

    /**
     * The chaos run's "token did not increase": A is refused for want of an epoch and draws 24, but
     * stalls before it installs it; B draws 30, installs it and is granted; Redis loses the keys
     * (FLUSHALL); A comes back and would install 24 on the emptied server, below every token of 30.
     * The loss took the draw ticket A's epoch was drawn for, so A is refused and draws again. The
     * control puts A's ticket back after the loss, as nothing tied an epoch to its refusal before:
     * A's stale epoch is installed and its token goes back.
     */
    @Test
    void anEpochDrawnBeforeALossIsNeverInstalledAfterIt() throws Exception {
        for (boolean control : new boolean[] {false, true}) {
            try (EmbeddedRedis redis = EmbeddedRedis.start(); RedisClient client = RedisClient.create(redis.uri());
                 StatefulRedisConnection<String, String> direct = client.connect()) {
                String resource = freshResource();
                java.util.concurrent.CountDownLatch drawn = new java.util.concurrent.CountDownLatch(1);
                java.util.concurrent.CountDownLatch resume = new java.util.concurrent.CountDownLatch(1);
                java.util.concurrent.atomic.AtomicBoolean first = new java.util.concurrent.atomic.AtomicBoolean(true);
                EpochSource stalling = r -> {
                    long epoch = epochs().nextEpoch(r);
                    if (first.getAndSet(false)) {
                        drawn.countDown();
                        try { // A stalls between its draw and its install, as a paused process would
                            assertThat(resume.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    }
                    return epoch;
                };
                try (RedisLeaseStore a = RedisLeaseStore.builder(redis.uri()).tokens(TokenPolicy.epochs(stalling)).build();
                     RedisLeaseStore b = store(redis.uri(), true)) {
                    var staleA = java.util.concurrent.CompletableFuture.supplyAsync(() -> Failovers.tokenOnce(a, resource));
                    assertThat(drawn.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                    String ticket = direct.sync().get(a.keys().epochTicketKey(resource));
                    assertThat(ticket).as("A's refusal made the draw ticket").isNotNull();
                    long granted = Failovers.tokenOnce(b, resource);
                    direct.sync().flushall();
                    if (control) {
                        direct.sync().set(a.keys().epochTicketKey(resource), ticket);
                    }
                    resume.countDown();
                    long afterLoss = staleA.get(30, java.util.concurrent.TimeUnit.SECONDS);
                    if (control) {
                        assertThat(afterLoss).as("control: A's stale epoch installed after the loss").isLessThan(granted);
                    } else {
                        assertThat(afterLoss).as("A drew again, above B's epoch").isGreaterThan(granted);
                    }
                }
            }
        }
    }

    @Test
    void anEvictedCounterOrEpochKeyStartsANewEpoch() {
        try (EmbeddedRedis redis = EmbeddedRedis.start(); RedisLeaseStore store = store(redis.uri(), true);
             RedisClient client = RedisClient.create(redis.uri()); StatefulRedisConnection<String, String> direct = client.connect()) {
            String resource = freshResource();
            long before = tokens(store, resource).get(4);
            direct.sync().del(store.keys().fenceKey(resource)); // maxmemory with allkeys-* evicts any key
            store.observeStoredFence(resource, before); // a refused write's raise must not bring the lost counter back
            assertThat(direct.sync().exists(store.keys().fenceKey(resource))).as("the counter is not recreated").isZero();
            long afterCounterLost = Failovers.tokenOnce(store, resource);
            assertThat(afterCounterLost).isGreaterThan(before);
            assertThat(afterCounterLost >>> 24).as("a new epoch").isGreaterThan(before >>> 24);
            direct.sync().del(store.keys().epochKey(resource));
            assertThat(Failovers.tokenOnce(store, resource)).isGreaterThan(afterCounterLost);
            assertThat(direct.sync().get(store.keys().epochKey(resource))).as("epoch:run_id/replication id").matches("\\d+:[0-9a-f]{40}/[0-9a-f]{40}");
        }
    }

    /**
     * The primary issues tokens its replica never receives (the replica is frozen and its link cut),
     * then dies; the Sentinel promotes the replica. A fresh store's first token must be above
     * every one issued; without epochs it repeats one (the negative control).
     */
    @Test
    void aFailoverToALaggingReplicaNeverRepeatsAToken() throws Exception {
        long[] safe = laggingFailover(true);
        assertThat(safe[1]).as("with epochs: above every token the dead primary issued").isGreaterThan(safe[0]);
        long[] control = laggingFailover(false);
        assertThat(control[1]).as("negative control: the lagging replica hands out a token already issued").isLessThanOrEqualTo(control[0]);
    }

    /** The highest token issued before the failover, and the first a fresh store gets after it. */
    private static long[] laggingFailover(boolean withEpochs) throws Exception {
        try (EmbeddedRedisFailoverGroup group = EmbeddedRedisFailoverGroup.start()) {
            String resource = freshResource();
            long highest;
            try (RedisLeaseStore before = store(group.sentinelUri(), withEpochs)) {
                Failovers.tokenOnce(before, resource);
                int primary = group.primaryPort();
                int replica = group.dataPorts().stream().filter(port -> port != primary).findFirst().orElseThrow();
                Failovers.awaitReplica(primary); // the replica has the epoch and the counter as they were
                assertThat(group.laggingReplica(replica, primary)).as("the primary dropped its replica link").isTrue();
                highest = tokens(before, resource).get(4); // issued by the primary alone
                group.stopNode(primary);
                group.thawNode(replica);
            }
            try (RedisLeaseStore fresh = storeOnceThereIsAPrimary(group.sentinelUri(), withEpochs)) {
                Lease after = Failovers.leaseAfterFailover(fresh, resource);
                after.release();
                return new long[] {highest, after.token()};
            }
        }
    }

    /**
     * A store that connects, which it can once the Sentinel names a primary that answers: until then
     * it still names the dead one, and building the store fails with StoreUnavailableException.
     */
    private static RedisLeaseStore storeOnceThereIsAPrimary(String uri, boolean withEpochs) {
        return await("the Sentinel names a primary that answers").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .ignoreException(StoreUnavailableException.class)
                .until(() -> store(uri, withEpochs), Objects::nonNull);
    }

    /** Epochs, a floor and a token source are one choice each (one TokenPolicy): a second choice is refused, not merged. */
    @Test
    void epochsReplaceTheFloorAndATokenSource() {
        RedisLeaseStore.Builder builder = RedisLeaseStore.builder("redis://127.0.0.1:1").tokens(TokenPolicy.epochs(epochs()));
        assertThatThrownBy(() -> builder.tokens(TokenPolicy.redisCounter(resource -> 0))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("one token policy");
        assertThatThrownBy(() -> builder.tokens(TokenPolicy.durable(resource -> 1))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("one token policy");
    }

}
