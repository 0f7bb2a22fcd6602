package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fenced.StoreUnavailableException;
import dev.fenced.embedded.EmbeddedRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A store whose connection lands on a replica (a Sentinel lookup made before a failover and used
 * after a pause, or an old primary brought back as a replica) is refused every write with
 * READONLY, and Lettuce does not connect again on its own. A store's own connection is then dropped
 * so that the next command connects again (through a Sentinel, to the primary it names then);
 * the control, a store on the caller's connection, which it must not close, keeps its connection.
 * Real {@code redis-server} processes: one turned into a replica of the other with REPLICAOF,
 * which, unlike a Sentinel's demotion, kills no client.
 */
class ReplicaAnswerTest {

    @Test
    void aStoreAnsweredReadOnlyConnectsAgainAndTheCallersConnectionIsLeftAlone() {
        try (EmbeddedRedis demoted = EmbeddedRedis.start(); EmbeddedRedis primary = EmbeddedRedis.start();
             RedisClient client = RedisClient.create(demoted.uri()); StatefulRedisConnection<String, String> admin = client.connect();
             StatefulRedisConnection<String, String> callers = client.connect();
             RedisLeaseStore own = RedisLeaseStore.builder(demoted.uri()).commandTimeout(Duration.ofSeconds(2)).build();
             RedisLeaseStore onCallers = RedisLeaseStore.builder(callers).build()) {
            String resource = "replica-" + UUID.randomUUID();
            Failovers.tokenOnce(own, resource);
            Failovers.tokenOnce(onCallers, resource);
            long ownId = ownConnectionId(admin);
            long callersId = callers.sync().clientId();

            admin.sync().replicaof("127.0.0.1", primary.port());
            assertThatThrownBy(() -> own.tryAcquire(resource, Duration.ofSeconds(5))).isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("READONLY");
            assertThatThrownBy(() -> onCallers.tryAcquire(resource, Duration.ofSeconds(5))).isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("READONLY");

            // Lettuce reconnects in the background after the server closed the link: wait for the new one.
            await("the store's own connection replaced").atMost(Duration.ofSeconds(10))
                    .until(() -> ownConnectionId(admin) > ownId);
            assertThat(admin.sync().clientList()).as("control: the caller's connection is kept").contains("id=" + callersId + " ");

            admin.sync().replicaofNoOne();
            // The sync emptied the node: a resource it never saw, as the counter's loss is another test's matter.
            assertThat(Failovers.tokenOnce(own, "replica-" + UUID.randomUUID())).as("the new connection takes leases again").isPositive();
        }
    }

    /**
     * The id of the store's own connection: the newest normal client but the test's own (the
     * caller's connection is older; a replica's link to its primary is flagged M, not N).
     */
    private static long ownConnectionId(StatefulRedisConnection<String, String> admin) {
        long self = admin.sync().clientId();
        return admin.sync().clientList().lines().filter(line -> line.contains(" flags=N ") && !line.contains("id=" + self + " "))
                .map(line -> Long.parseLong(line.substring(line.indexOf("id=") + 3, line.indexOf(' ', line.indexOf("id=")))))
                .max(Long::compare).orElse(-1L);
    }
}
