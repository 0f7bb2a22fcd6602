package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.Lease;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.JdbcLeaseStore;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.testing.servers.OwnDatabase;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import dev.fenced.testing.servers.UrlDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code --leases}: a deployment settles with its leases in the database and no Redis at all; its
 * choice is recorded, so a worker started with another store is refused in one line (exit 16,
 * nothing claimed) until {@code fenced migrate --leases} switches it, raising the new store's tokens
 * above the stored fences. The control shows why the check exists: a lease in the database and one
 * in Redis for the same merchant are both granted at once. Each case on a database of its own, since
 * the choice is the database's.
 */
class LeaseStoreCliTest {
    private static final String REDIS = TestRedis.uri();

    private static String seeded(String db, int refunds) {
        String merchant = "ls_" + UUID.randomUUID().toString().substring(0, 8);
        CliRun seed = CliRun.of("seed", "--merchant", merchant, "--refunds", String.valueOf(refunds), "--total", refunds + ".00",
                "--db-url", db);
        assertThat(seed.exit()).as(seed.both()).isZero();
        return merchant;
    }

    private static CliRun settle(String db, String merchant, String gateway, String... leaseOptions) {
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("settle", "--merchant", merchant, "--ttl", "5s",
                "--db-url", db, "--gateway-url", gateway));
        args.addAll(java.util.List.of(leaseOptions));
        return CliRun.of(args);
    }

    @Test
    void aDeploymentSettlesWithItsLeasesInTheDatabaseAndRefusesAnotherStoreUntilSwitched() throws Exception {
        try (OwnDatabase own = OwnDatabase.on(TestDatabases.postgresUrl())) {
            String db = own.url();
            String merchant = seeded(db, 6);
            try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
                // --redis-url= : no Redis at all, whatever the environment names.
                CliRun inDatabase = settle(db, merchant, gateway.url(), "--leases", "database", "--redis-url=");
                assertThat(inDatabase.exit()).as(inDatabase.both()).isZero();
                assertThat(states(db, merchant)).containsExactly(Map.entry("sent", 6L));
                assertThat(gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).map(GatewayRefund::idempotencyKey)
                        .distinct()).hasSize(6);
                long databaseFence = highestFence(db, merchant);
                assertThat(databaseFence).as("a token from fence_token_seq on the rows").isPositive();

                CliRun status = CliRun.of("status", "--merchant", merchant, "--leases", "database", "--redis-url=", "--db-url", db);
                assertThat(status.exit()).as(status.both()).isZero();
                assertThat(status.stdout()).contains("database");

                String next = seeded(db, 3);
                CliRun other = settle(db, next, gateway.url(), "--leases", "redis", "--redis-url", REDIS);
                assertThat(other.exit()).as(other.both()).isEqualTo(FencedCli.LEASE_STORE_MISMATCH);
                assertThat(other.oneLineError()).as(other.stderr()).isTrue();
                assertThat(other.stderr()).contains("leases are in database", "--leases redis", "fenced migrate --leases redis");
                assertThat(states(db, next)).as("nothing claimed").containsExactly(Map.entry("pending", 3L));

                CliRun doctor = CliRun.of("doctor", "--leases", "redis", "--redis-url", REDIS, "--db-url", db);
                assertThat(doctor.exit()).as(doctor.both()).isEqualTo(FencedCli.RUNTIME_FAILURE);
                assertThat(doctor.stdout()).contains("the deployment's are in database, --leases says redis");

                CliRun switched = CliRun.of("migrate", "--db-url", db, "--leases", "redis", "--redis-url", REDIS);
                assertThat(switched.exit()).as(switched.both()).isZero();
                assertThat(switched.stdout()).contains("leases: Redis for this deployment");

                try (com.zaxxer.hikari.HikariDataSource pool = Connections.database(db, 2);
                     RedisLeaseStore redis = Connections.leases(REDIS, pool, "test")) {
                    Lease first = redis.tryAcquire(Merchants.resource(merchant), Duration.ofSeconds(5)).orElseThrow();
                    assertThat(first.token()).as("Redis's first token, above the database's fences").isGreaterThan(databaseFence);
                    first.release();
                }
                CliRun inRedis = settle(db, next, gateway.url(), "--leases", "redis", "--redis-url", REDIS);
                assertThat(inRedis.exit()).as(inRedis.both()).isZero();
                assertThat(states(db, next)).containsExactly(Map.entry("sent", 3L));
                CliRun back = settle(db, seeded(db, 1), gateway.url(), "--leases", "database", "--redis-url=");
                assertThat(back.exit()).as("the database is no longer the deployment's: " + back.both())
                        .isEqualTo(FencedCli.LEASE_STORE_MISMATCH);
            }
        }
    }

    /** The control: without the recorded choice, a lease in each store for one merchant is granted at once. */
    @Test
    void negativeControl_leasesInTwoStoresDoNotKeepEachOtherOut() throws Exception {
        try (OwnDatabase own = OwnDatabase.on(TestDatabases.postgresUrl())) {
            String db = own.url();
            CliRun migrate = CliRun.of("migrate", "--db-url", db);
            assertThat(migrate.exit()).as(migrate.both()).isZero();
            String resource = Merchants.resource("ls_" + UUID.randomUUID().toString().substring(0, 8));
            try (RedisLeaseStore redis = RedisLeaseStore.builder(REDIS).build()) {
                JdbcLeaseStore database = JdbcLeaseStore.builder(new UrlDataSource(db)).build();
                Optional<Lease> inRedis = redis.tryAcquire(resource, Duration.ofSeconds(10));
                Optional<Lease> inDatabase = database.tryAcquire(resource, Duration.ofSeconds(10));
                assertThat(inRedis).as("Redis grants it").isPresent();
                assertThat(inDatabase).as("and the database grants it too: two holders at once").isPresent();
                inRedis.get().release();
                inDatabase.get().release();
            }
        }
    }

    @Test
    void tokensOfAnotherIssuerDoNotGoWithLeasesOutsideRedis() {
        CliRun run = CliRun.of("settle", "--merchant", "m_1", "--leases", "database", "--tokens", "epochs", "--db-url",
                TestDatabases.postgresUrl(), "--gateway-url", "http://127.0.0.1:1");
        assertThat(run.exit()).as(run.both()).isEqualTo(FencedCli.USAGE);
        assertThat(run.stderr()).contains("--tokens epochs goes with --leases redis");
        CliRun unknown = CliRun.of("settle", "--merchant", "m_1", "--leases", "zookeeper");
        assertThat(unknown.exit()).isEqualTo(FencedCli.USAGE);
        assertThat(unknown.stderr()).contains("--leases must be redis, database or etcd, got 'zookeeper'");
        CliRun noEtcd = CliRun.of("settle", "--merchant", "m_1", "--leases", "etcd", "--etcd-url=", "--db-url",
                TestDatabases.postgresUrl(), "--gateway-url", "http://127.0.0.1:1");
        assertThat(noEtcd.exit()).isEqualTo(FencedCli.USAGE);
        assertThat(noEtcd.stderr()).contains("needs --etcd-url or the environment variable FENCED_ETCD_URL");
        CliRun badEtcd = CliRun.of("settle", "--merchant", "m_1", "--leases", "etcd", "--etcd-url", "ftp://u:hunter2@etcd:2379", "--db-url",
                "jdbc:postgresql://127.0.0.1:1/x", "--gateway-url", "http://127.0.0.1:1");
        assertThat(badEtcd.exit()).as("found before the unreachable database: " + badEtcd.both()).isEqualTo(FencedCli.USAGE);
        assertThat(badEtcd.oneLineError()).as(badEtcd.stderr()).isTrue();
        assertThat(badEtcd.stderr()).contains("--etcd-url:").doesNotContain("hunter2");
    }

    private static Map<String, Long> states(String db, String merchant) throws Exception {
        Map<String, Long> states = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(db);
             PreparedStatement s = c.prepareStatement("SELECT state, COUNT(*) FROM refund WHERE merchant = ? GROUP BY state")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    states.put(rs.getString(1), rs.getLong(2));
                }
            }
        }
        return states;
    }

    private static long highestFence(String db, String merchant) throws Exception {
        try (Connection c = DriverManager.getConnection(db);
             PreparedStatement s = c.prepareStatement("SELECT MAX(fence) FROM refund WHERE merchant = ?")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
