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
 * A real {@code redis-server} turned into a replica with REPLICAOF, which, unlike a Sentinel's
 * demotion, kills no client; of a port nothing listens on, so that no sync (which replaces the
 * node's data) happens while the test waits.
 */
class ReplicaAnswerTest {

    @Test
    void aStoreAnsweredReadOnlyConnectsAgainAndTheCallersConnectionIsLeftAlone() {
        try (EmbeddedRedis demoted = EmbeddedRedis.start();
             RedisClient client = RedisClient.create(demoted.uri()); StatefulRedisConnection<String, String> admin = client.connect();
             StatefulRedisConnection<String, String> callers = client.connect();
             RedisLeaseStore own = RedisLeaseStore.builder(demoted.uri()).commandTimeout(Duration.ofSeconds(2)).build();
             RedisLeaseStore onCallers = RedisLeaseStore.builder(callers).build()) {
            String resource = "replica-" + UUID.randomUUID();
            Failovers.tokenOnce(own, resource);
            Failovers.tokenOnce(onCallers, resource);
            long callersId = callers.sync().clientId();
            long ownId = ownConnectionId(admin, callersId);

            admin.sync().replicaof("127.0.0.1", EmbeddedRedis.freePort());
            assertThatThrownBy(() -> own.tryAcquire(resource, Duration.ofSeconds(5))).isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("READONLY");
            assertThatThrownBy(() -> onCallers.tryAcquire(resource, Duration.ofSeconds(5))).isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("READONLY");

            // The server closes the connection after answering the CLIENT KILL: wait for it to be gone.
            await("the store's own connection dropped").atMost(Duration.ofSeconds(10))
                    .until(() -> !admin.sync().clientList().contains("id=" + ownId + " "));
            assertThat(admin.sync().clientList()).as("control: the caller's connection is kept").contains("id=" + callersId + " ");

            admin.sync().replicaofNoOne();
            assertThat(Failovers.tokenOnce(own, resource)).as("the new connection takes leases again").isPositive();
        }
    }

    /** The id of the store's own connection: the one that ran a script, other than the caller's. */
    private static long ownConnectionId(StatefulRedisConnection<String, String> admin, long callersId) {
        return admin.sync().clientList().lines().filter(line -> line.matches(".* cmd=eval(sha)? .*") && !line.startsWith("id=" + callersId + " "))
                .map(line -> Long.parseLong(line.substring("id=".length(), line.indexOf(' ')))).findFirst().orElseThrow();
    }
}
