package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.LeaseStore;
import dev.fenced.testing.LeaseStoreContract;
import dev.fenced.testing.servers.TestRedis;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
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

    @Override
    protected Duration timeLeft(String resource) {
        return store.inspect(resource).timeLeft();
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
                .hasMessageContaining("uses its timeout");
        assertThatThrownBy(() -> RedisLeaseStore.builder(connection).clientOptions(ClientOptions.create()))
                .isInstanceOf(IllegalStateException.class);
    }

    /**
     * On the caller's client, the store opens a connection of its own (with the client's URI and
     * options) and closes only that one: the client keeps serving its other connections.
     */
    @Test
    void onTheCallersClientTheStoreClosesOnlyItsOwnConnection() {
        String resource = freshResource();
        try (RedisLeaseStore onClient = RedisLeaseStore.builder(client).build()) {
            long token = onClient.tryAcquire(resource, Duration.ofSeconds(5)).orElseThrow().token();
            assertThat(store.tryAcquire(resource, Duration.ofSeconds(5))).as("one lease across both stores").isEmpty();
            assertThat(onClient.inspect(resource).counter()).isEqualTo(token);
            assertThat(onClient.ping()).isPositive();
        }
        assertThat(connection.sync().ping()).isEqualTo("PONG");
        try (StatefulRedisConnection<String, String> another = client.connect()) {
            assertThat(another.sync().ping()).as("the client still connects").isEqualTo("PONG");
        }
    }

    /** The caller's resources and options are used and outlive the store: closing it shuts down only its own client. */
    @Test
    void theCallersResourcesAndOptionsOutliveTheStore() {
        ClientResources resources = DefaultClientResources.create();
        try {
            ClientOptions options = ClientOptions.builder().autoReconnect(false).build();
            try (RedisLeaseStore own = RedisLeaseStore.builder(TestRedis.uri()).clientResources(resources).clientOptions(options).build()) {
                assertThat(own.tryAcquire(freshResource(), Duration.ofSeconds(5))).isPresent();
            }
            RedisClient another = RedisClient.create(resources, TestRedis.uri());
            try (StatefulRedisConnection<String, String> connected = another.connect()) {
                assertThat(connected.sync().ping()).as("the resources still run").isEqualTo("PONG");
            } finally {
                another.shutdown();
            }
        } finally {
            resources.shutdown();
        }
    }
}
