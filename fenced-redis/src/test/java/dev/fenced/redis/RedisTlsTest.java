package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.StoreUnavailableException;
import dev.fenced.testing.servers.TlsRedis;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The lease contract over TLS ({@code rediss://}) against a real {@code redis-server} with
 * {@code --tls-port} that asks for client certificates, with certificates the test makes; and every
 * way the handshake can fail, each one line naming the server, as a {@link StoreTlsException}.
 */
class RedisTlsTest extends RedisStoreContract {
    private static TlsRedis server;
    private static RedisLeaseStore store;

    private static RedisTls.Builder trusted() {
        return RedisTls.builder().trustedCertificates(server.caCertificate())
                .clientCertificate(server.clientCertificate(), server.clientKey());
    }

    @BeforeAll
    static void start() {
        server = TlsRedis.start(null);
        store = RedisLeaseStore.builder(server.uri()).tls(trusted().build()).build();
    }

    @AfterAll
    static void stop() {
        if (store != null) {
            store.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Override
    protected RedisLeaseStore redisStore() {
        return store;
    }

    @Test
    void aServerCertificateFromAnotherCaIsRefused() {
        RedisTls wrongCa = RedisTls.builder().trustedCertificates(server.otherCaCertificate())
                .clientCertificate(server.clientCertificate(), server.clientKey()).build();
        assertThatThrownBy(() -> RedisLeaseStore.builder(server.uri()).tls(wrongCa).build())
                .isInstanceOf(StoreTlsException.class)
                .hasMessageStartingWith("TLS with Redis at " + server.uri() + " failed: ")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
        // Control: verification off, the same trust store connects.
        RedisTls unverified = RedisTls.builder().trustedCertificates(server.otherCaCertificate())
                .clientCertificate(server.clientCertificate(), server.clientKey()).verify(RedisTls.Verify.NONE).build();
        try (RedisLeaseStore insecure = RedisLeaseStore.builder(server.uri()).tls(unverified).build()) {
            assertThat(insecure.ping()).isPositive();
        }
    }

    @Test
    void withoutAClientCertificateTheServerRefusesTheConnection() {
        RedisTls noClientCertificate = RedisTls.builder().trustedCertificates(server.caCertificate()).build();
        assertThatThrownBy(() -> RedisLeaseStore.builder(server.uri()).tls(noClientCertificate).commandTimeout(Duration.ofSeconds(2)).build())
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining(server.uri())
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @Test
    void aCertificateForAnotherNameIsRefusedUnlessOnlyTheChainIsVerified() {
        try (TlsRedis elsewhere = TlsRedis.start("redis.example")) {
            RedisTls full = RedisTls.builder().trustedCertificates(elsewhere.caCertificate())
                    .clientCertificate(elsewhere.clientCertificate(), elsewhere.clientKey()).build();
            assertThatThrownBy(() -> RedisLeaseStore.builder(elsewhere.uri()).tls(full).build()).isInstanceOf(StoreTlsException.class);
            RedisTls chainOnly = RedisTls.builder().trustedCertificates(elsewhere.caCertificate())
                    .clientCertificate(elsewhere.clientCertificate(), elsewhere.clientKey()).verify(RedisTls.Verify.CA).build();
            try (RedisLeaseStore store = RedisLeaseStore.builder(elsewhere.uri()).tls(chainOnly).build()) {
                assertThat(store.tryAcquire("tls:chain-only", Duration.ofSeconds(5))).isPresent();
            }
        }
    }

    @Test
    void badTlsSettingsAreRefusedBeforeConnecting() {
        assertThatThrownBy(() -> RedisTls.builder().trustedCertificates(Path.of("/nonexistent/ca.pem")).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("/nonexistent/ca.pem");
        assertThatThrownBy(() -> RedisLeaseStore.builder(server.uri().replace("rediss://", "redis://")).tls(trusted().build()).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rediss://");
        assertThatThrownBy(() -> RedisLeaseStore.builder(server.uri()).build())
                .as("the JVM's trust store does not know the test CA").isInstanceOf(StoreTlsException.class);
    }
}
