package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.LeaseStore;
import dev.fenced.testing.LeaseStoreContract;
import dev.fenced.testing.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The lease contract for a store on a connection the application already has. */
class RedisLeaseStoreOnCallersConnectionTest extends LeaseStoreContract {
    private static RedisClient client;
    private static StatefulRedisConnection<String, String> connection;
    private static RedisLeaseStore store;

    @BeforeAll
    static void connect() {
        client = RedisClient.create(TestRedis.uri());
        connection = client.connect();
        store = RedisLeaseStore.builder(connection).build();
    }

    @AfterAll
    static void disconnect() {
        store.close();
        connection.close();
        client.shutdown();
    }

    @Override
    protected LeaseStore store() {
        return store;
    }

    @Override
    protected void expireLeaseBehindItsBack(String resource) {
        connection.sync().del(store.keys().lockKey(resource));
    }

    @Test
    void closingTheStoreLeavesTheCallersConnectionOpen() {
        RedisLeaseStore.builder(connection).build().close();
        assertThat(connection.isOpen()).isTrue();
        assertThat(connection.sync().ping()).isEqualTo("PONG");
        assertThat(store.tryAcquire(freshResource(), Duration.ofSeconds(5)).orElseThrow().release()).isTrue();
    }

    @Test
    void theTimeoutBelongsToTheCallersConnection() {
        assertThatThrownBy(() -> RedisLeaseStore.builder(connection).commandTimeout(Duration.ofSeconds(1)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("connection's timeout");
    }
}
