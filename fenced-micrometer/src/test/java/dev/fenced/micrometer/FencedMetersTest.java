package dev.fenced.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FenceViolation;
import dev.fenced.FencedExecutor;
import dev.fenced.Lease;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.FencedTransactions;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.jdbc.StaleTransactionException;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.SettlementOutcome;
import dev.fenced.settlement.SettlementWorker;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every decision the library reports, made for real against Redis, PostgreSQL and the gateway
 * over HTTP, and read back from a {@link SimpleMeterRegistry}; the README's metrics table must
 * name exactly these meters with exactly these tags.
 */
class FencedMetersTest {
    private static final Path README = Path.of("..", "README.md");
    private static HikariDataSource db;

    @BeforeAll
    static void start() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestDatabases.postgresUrl());
        config.setMaximumPoolSize(6);
        db = new HikariDataSource(config);
        RefundSchema.migrate(db);
        FencedSchema.migrate(db);
    }

    @AfterAll
    static void stop() {
        db.close();
    }

    @Test
    void everyDecisionIsCountedUnderTheNamesTheReadmeTables() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FencedMeters meters = FencedMeters.in(registry);
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        String resource = Merchants.resource(merchant);
        RefundSeeder.seed(db, merchant, merchant + "_r", 6, new BigDecimal("600.00"), "EUR");
        try (RedisLeaseStore leases = RedisLeaseStore.builder(TestRedis.uri()).observer(meters)
                .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf))).build();
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().refuseAbove(new BigDecimal("1000.00")).build())) {
            // Granted, then busy.
            Lease first = leases.tryAcquire(resource, Duration.ofMillis(300)).orElseThrow();
            assertThat(leases.tryAcquire(resource, Duration.ofSeconds(5))).isEmpty();
            assertThat(first.renew(Duration.ofMillis(200))).isTrue();
            awaitExpiry(leases, resource);
            assertThat(first.renew(Duration.ofSeconds(5))).as("expired: the renewal finds it gone").isFalse();

            // A settlement: gateway answers by outcome and refunds by final state (one refused above 1000.00).
            SettlementWorker worker = SettlementWorker.builder().leaseStore(leases).dataSource(db)
                    .gateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(2))).ttl(Duration.ofSeconds(10))
                    .listener(SettlementMeters.in(registry)).build();
            assertThat(worker.settle(merchant).sent()).isEqualTo(6);
            String big = merchant + "b";
            RefundSeeder.seed(db, big, big + "_r", 1, new BigDecimal("2500.00"), "EUR");
            assertThat(worker.settle(big).failed()).isEqualTo(1);

            // The counter lost, reseeded from the rows' fences; then found behind a stored fence, raised.
            leases.forget(resource);
            long reseeded = leases.tryAcquire(resource, Duration.ofSeconds(5)).map(lease -> {
                lease.release();
                return lease.token();
            }).orElseThrow();
            leases.observeStoredFence(resource, reseeded + 10);

            // Refused writes: a stale claim, a stale transaction; the executor's runs by status.
            FencedRows rows = FencedRows.of(RefundSchema.table()).observedBy(meters);
            String late = merchant + "l";
            RefundSeeder.seed(db, late, late + "_r", 1, new BigDecimal("1.00"), "EUR");
            rows.claim(db, late + "_r001", reseeded + 20);
            assertThatThrownBy(() -> rows.claim(db, late + "_r001", reseeded + 19)).isInstanceOf(FenceViolation.class);
            FencedTransactions transactions = FencedTransactions.create().observedBy(meters);
            transactions.inTransaction(db, resource, reseeded + 20, c -> null);
            assertThatThrownBy(() -> transactions.inTransaction(db, resource, reseeded + 19, c -> null))
                    .isInstanceOf(StaleTransactionException.class);

            // The executor's token (the raised counter + 1) is below the late row's fence: refused, and the counter raised past it.
            FencedExecutor executor = FencedExecutor.builder(leases).ttl(Duration.ofSeconds(5)).observer(meters).build();
            assertThat(executor.execute(resource, Lease::token).status()).isEqualTo(FencedExecutor.Status.EXECUTED);
            FencedExecutor.Outcome<Object> refused = executor.execute(resource, lease -> {
                rows.claim(db, late + "_r001", lease.token());
                return null;
            });
            assertThat(refused.status()).isEqualTo(FencedExecutor.Status.FENCED_OUT);
            assertThat(executor.execute(resource, Lease::token).token()).as("the next run's token is above the row's fence")
                    .isGreaterThan(reseeded + 20);
            try (Lease held = leases.tryAcquire(resource, Duration.ofSeconds(5)).orElseThrow()) {
                assertThat(executor.execute(resource, Lease::token).status()).isEqualTo(FencedExecutor.Status.BUSY);
            }
        }

        assertThat(count(registry, FencedMeters.ACQUIRE, "outcome", "granted")).isGreaterThanOrEqualTo(5);
        assertThat(count(registry, FencedMeters.ACQUIRE, "outcome", "busy")).isGreaterThanOrEqualTo(2);
        assertThat(count(registry, FencedMeters.RENEWALS, "outcome", "renewed")).isEqualTo(1);
        assertThat(count(registry, FencedMeters.RENEWALS, "outcome", "lost")).isEqualTo(1);
        assertThat(registry.get(FencedMeters.LOST).counter().count()).isEqualTo(1);
        assertThat(registry.get(FencedMeters.RESEEDS).counter().count()).isEqualTo(1);
        assertThat(registry.get(FencedMeters.RAISES).counter().count()).as("observeStoredFence, and the executor's fenced-out run").isEqualTo(2);
        assertThat(count(registry, FencedMeters.VIOLATIONS, "operation", "claim")).as("the stale claim, the executor's").isEqualTo(2);
        assertThat(count(registry, FencedMeters.VIOLATIONS, "operation", "transaction")).isEqualTo(1);
        assertThat(count(registry, FencedMeters.RUNS, "status", "executed")).isEqualTo(2);
        assertThat(count(registry, FencedMeters.RUNS, "status", "fenced_out")).isEqualTo(1);
        assertThat(count(registry, FencedMeters.RUNS, "status", "busy")).isEqualTo(1);
        assertThat(count(registry, SettlementMeters.GATEWAY_CALLS, "outcome", "succeeded")).isEqualTo(6);
        assertThat(count(registry, SettlementMeters.GATEWAY_CALLS, "outcome", "rejected")).isEqualTo(1);
        assertThat(count(registry, SettlementMeters.SETTLED, "state", "sent")).isEqualTo(6);
        assertThat(count(registry, SettlementMeters.SETTLED, "state", "failed")).isEqualTo(1);

        assertThat(readmeTable()).as("the README's metrics table: name -> tag keys").isEqualTo(tagKeysByName(registry));
    }

    /**
     * A fresh lease of 300 ms renewed to 200 ms expires by Redis's clock, which no test can move:
     * polled until Redis no longer names a holder, never waited for a fixed time.
     */
    private static void awaitExpiry(RedisLeaseStore leases, String resource) {
        await("the lease on " + resource + " expired by Redis's clock").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
                .until(() -> leases.inspect(resource).holder() == null);
    }

    private static double count(SimpleMeterRegistry registry, String name, String tag, String value) {
        Meter meter = registry.find(name).tag(tag, value).meter();
        assertThat(meter).as(name + " {" + tag + "=" + value + "}").isNotNull();
        return meter.measure().iterator().next().getValue();
    }

    private static Map<String, Set<String>> tagKeysByName(SimpleMeterRegistry registry) {
        return registry.getMeters().stream().collect(Collectors.groupingBy(meter -> meter.getId().getName(), TreeMap::new,
                Collectors.flatMapping(meter -> meter.getId().getTags().stream().map(Tag::getKey), Collectors.toCollection(TreeSet::new))));
    }

    /** Rows of the README's metrics table: | `name` | type | `tag`: values | meaning |. */
    private static Map<String, Set<String>> readmeTable() throws IOException {
        String readme = Files.readString(README);
        int start = readme.indexOf("### Metrics");
        assertThat(start).as("README has a Metrics section").isNotNegative();
        String section = readme.substring(start, readme.indexOf("\n## ", start));
        Map<String, Set<String>> table = new TreeMap<>();
        Matcher row = Pattern.compile("(?m)^\\| `(fenced\\.[a-z.]+)` \\| [a-z]+ \\| ([^|]*) \\|").matcher(section);
        while (row.find()) {
            Set<String> keys = new TreeSet<>();
            Matcher key = Pattern.compile("`([a-z_]+)`:").matcher(row.group(2));
            while (key.find()) {
                keys.add(key.group(1));
            }
            table.put(row.group(1), keys);
        }
        return table;
    }
}
