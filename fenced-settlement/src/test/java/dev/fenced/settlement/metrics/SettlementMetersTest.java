package dev.fenced.settlement.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.WebhookEvent;
import dev.fenced.provider.WebhookSignature;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.SettlementWorker;
import dev.fenced.settlement.WebhookReceiver;
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
import java.util.List;
import java.util.Locale;
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
 * A settlement against Redis, PostgreSQL and the gateway over HTTP, its meters read back from a
 * {@link SimpleMeterRegistry}; the README's settlement meters table must name exactly these meters
 * with exactly these tags.
 */
class SettlementMetersTest {
    private static final Path README = Path.of("..", "README.md");
    private static HikariDataSource db;

    @BeforeAll
    static void start() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestDatabases.postgresUrl());
        config.setMaximumPoolSize(6);
        db = new HikariDataSource(config);
        RefundSchema.migrate(db);
    }

    @AfterAll
    static void stop() {
        db.close();
    }

    @Test
    void gatewayAnswersAndFinishedRefundsAreCountedUnderTheNamesTheReadmeTables() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(db, merchant, merchant + "_r", 6, new BigDecimal("600.00"), "EUR");
        try (RedisLeaseStore leases = RedisLeaseStore.builder(TestRedis.uri())
                .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf))).build();
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().refuseAbove(new BigDecimal("1000.00")).build())) {
            // Gateway answers by outcome and refunds by final state (one refused above 1000.00).
            SettlementMeters meters = SettlementMeters.in(registry);
            SettlementWorker worker = SettlementWorker.builder().leaseStore(leases).dataSource(db)
                    .gateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(2))).ttl(Duration.ofSeconds(10))
                    .listener(meters).build();
            assertThat(worker.settle(merchant).sent()).isEqualTo(6);
            // The provider's news on one of them, by a signed webhook, counted as fenced webhooks counts it.
            GatewayRefund paid = gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).findFirst().orElseThrow();
            byte[] body = new WebhookEvent("evt_" + merchant, WebhookEvent.REFUND_UPDATED, 0, paid).toJson();
            WebhookReceiver.Receipt receipt = WebhookReceiver.of(db, WebhookSignature.of(List.of("whsec_meters")))
                    .receive(WebhookSignature.header(System.currentTimeMillis() / 1000, body, List.of("whsec_meters")), body);
            meters.providerNews("webhook", receipt.outcome().name().toLowerCase(Locale.ROOT), 1);
            String big = merchant + "b";
            RefundSeeder.seed(db, big, big + "_r", 1, new BigDecimal("2500.00"), "EUR");
            assertThat(worker.settle(big).failed()).isEqualTo(1);
        }

        assertThat(count(registry, SettlementMeters.GATEWAY_CALLS, "outcome", "succeeded")).isEqualTo(6);
        assertThat(count(registry, SettlementMeters.GATEWAY_CALLS, "outcome", "rejected")).isEqualTo(1);
        assertThat(count(registry, SettlementMeters.SETTLED, "state", "sent")).isEqualTo(6);
        assertThat(count(registry, SettlementMeters.SETTLED, "state", "failed")).isEqualTo(1);
        assertThat(count(registry, SettlementMeters.PROVIDER_NEWS, "outcome", "settled")).isEqualTo(1);

        assertThat(readmeTable("#### Settlement meters")).as("the README's settlement meters table: name -> tag keys")
                .isEqualTo(tagKeysByName(registry));
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

    /** Rows of the README's table under {@code heading}, up to the next heading: | `name` | type | `tag`: values | meaning |. */
    private static Map<String, Set<String>> readmeTable(String heading) throws IOException {
        String readme = Files.readString(README);
        int start = readme.indexOf(heading + "\n");
        assertThat(start).as("README has a section " + heading).isNotNegative();
        String section = readme.substring(start, readme.indexOf("\n#", start + heading.length()));
        Map<String, Set<String>> table = new TreeMap<>();
        Matcher row = Pattern.compile("(?m)^\\| `([a-z]+\\.[a-z.]+)` \\| [a-z]+ \\| ([^|]*) \\|").matcher(section);
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
