package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TlsRedis;
import org.junit.jupiter.api.Test;

/** The command line on a TLS-only Redis that asks for client certificates: what works, and each mistake in one line. */
class RedisTlsCliTest {
    private static final String DB = TestDatabases.postgresUrl();

    @Test
    void statusOverTlsAndEveryTlsMistakeInOneLine() {
        try (TlsRedis redis = TlsRedis.start(null)) {
            CliRun ok = CliRun.of("status", "--merchant", "m_tls", "--db-url", DB, "--redis-url", redis.uri(),
                    "--redis-tls-ca", redis.caCertificate().toString(), "--redis-tls-cert", redis.clientCertificate().toString(),
                    "--redis-tls-key", redis.clientKey().toString());
            assertThat(ok.exit()).as(ok.both()).isZero();

            CliRun untrusted = CliRun.of("status", "--merchant", "m_tls", "--db-url", DB, "--redis-url", redis.uri(),
                    "--redis-tls-ca", redis.otherCaCertificate().toString(), "--redis-tls-cert", redis.clientCertificate().toString(),
                    "--redis-tls-key", redis.clientKey().toString());
            assertThat(untrusted.exit()).as(untrusted.both()).isEqualTo(FencedCli.RUNTIME_FAILURE);
            assertThat(untrusted.oneLineError()).as(untrusted.stderr()).isTrue();
            assertThat(untrusted.stderr()).contains("TLS with Redis at " + redis.uri() + " failed");

            CliRun missing = CliRun.of("status", "--merchant", "m_tls", "--db-url", DB, "--redis-url", redis.uri(),
                    "--redis-tls-ca", "/nonexistent/ca.pem");
            assertThat(missing.exit()).isEqualTo(FencedCli.USAGE);
            assertThat(missing.oneLineError()).as(missing.stderr()).isTrue();
            assertThat(missing.stderr()).contains("/nonexistent/ca.pem");

            CliRun half = CliRun.of("status", "--merchant", "m_tls", "--db-url", DB, "--redis-url", redis.uri(),
                    "--redis-tls-cert", redis.clientCertificate().toString());
            assertThat(half.exit()).isEqualTo(FencedCli.USAGE);
            assertThat(half.stderr()).contains("--redis-tls-cert and --redis-tls-key go together");

            CliRun plain = CliRun.of("status", "--merchant", "m_tls", "--db-url", DB, "--redis-url", redis.uri().replace("rediss:", "redis:"),
                    "--redis-tls-ca", redis.caCertificate().toString());
            assertThat(plain.exit()).isEqualTo(FencedCli.USAGE);
            assertThat(plain.stderr()).contains("need a rediss:// URL");

            CliRun verify = CliRun.of("status", "--merchant", "m_tls", "--db-url", DB, "--redis-url", redis.uri(), "--redis-tls-verify", "maybe");
            assertThat(verify.exit()).isEqualTo(FencedCli.USAGE);
            assertThat(verify.oneLineError()).isTrue();
        }
    }
}
