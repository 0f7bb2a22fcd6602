package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fenced.Lease;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code status} in an outage, when an operator needs it most: with the gateway or Redis
 * unreachable it shows what it could read (the rows always; the lease when Redis answers) and
 * says what it could not, exit 0. Only an unreachable database, which holds everything it shows,
 * is one line and exit 1. Control: with everything reachable, everything is shown and nothing is
 * said to be unknown.
 */
class StatusOutageTest {
    private static final String DB = TestDatabases.postgresUrl();
    private static final String REDIS = TestRedis.uri();
    private static final String NO_REDIS = "redis://127.0.0.1:1";
    private static final String NO_GATEWAY = "http://127.0.0.1:1";

    /** A merchant with 3 pending refunds whose lease worker-out holds; "0..." sorts it onto the board's first page. */
    private static String seeded() {
        String merchant = "0_o" + UUID.randomUUID().toString().substring(0, 8);
        CliRun seeded = CliRun.of("seed", "--merchant", merchant, "--refunds", "3", "--total", "30.00", "--db-url", DB, "--quiet");
        assertThat(seeded.exit()).as(seeded.both()).isZero();
        return merchant;
    }

    @Test
    void theGatewayUnreachableStillShowsTheLeaseAndTheRows() throws Exception {
        String merchant = seeded();
        try (RedisLeaseStore leases = RedisLeaseStore.builder(REDIS).ownerLabel("worker-out").build();
             Lease held = leases.tryAcquire(Merchants.resource(merchant), Duration.ofSeconds(30)).orElseThrow();
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            CliRun control = CliRun.of("status", "--merchant", merchant, "--db-url", DB, "--redis-url", REDIS, "--gateway-url", gateway.url());
            assertThat(control.exit()).as(control.both()).isZero();
            assertThat(control.stdout()).containsPattern("leaseHolder +worker-out/").containsPattern("rowsByState +\\{pending=3\\}")
                    .containsPattern("gatewayRefunds +0").doesNotContain("unknown", "unreachable");

            CliRun text = CliRun.of("status", "--merchant", merchant, "--db-url", DB, "--redis-url", REDIS, "--gateway-url", NO_GATEWAY);
            assertThat(text.exit()).as(text.both()).isZero();
            assertThat(text.stdout()).containsPattern("leaseHolder +worker-out/").containsPattern("counter +" + held.token())
                    .containsPattern("rowsByState +\\{pending=3\\}").containsPattern("gateway +unknown: gateway at http://127\\.0\\.0\\.1:1 is unreachable")
                    .doesNotContain("gatewayRefunds");

            CliRun json = CliRun.of("status", "--merchant", merchant, "--json", "--db-url", DB, "--redis-url", REDIS, "--gateway-url",
                    NO_GATEWAY);
            assertThat(json.exit()).as(json.both()).isZero();
            JsonNode report = new ObjectMapper().readTree(json.stdout());
            assertThat(report.get("gatewayUnknown").asText()).contains("127.0.0.1:1 is unreachable");
            assertThat(report.has("gatewayRefunds")).isFalse();
            assertThat(report.get("leaseHolder").asText()).startsWith("worker-out/");
            assertThat(report.get("rowsByState").get("pending").asLong()).isEqualTo(3);
            assertThat(new ObjectMapper().readTree(CliRun.of("status", "--merchant", merchant, "--json", "--db-url", DB, "--redis-url", REDIS,
                    "--gateway-url", gateway.url()).stdout()).has("gatewayUnknown")).as("control").isFalse();
        }
    }

    @Test
    void redisUnreachableStillShowsTheRows() throws Exception {
        String merchant = seeded();
        CliRun text = CliRun.of("status", "--merchant", merchant, "--db-url", DB, "--redis-url", NO_REDIS);
        assertThat(text.exit()).as(text.both()).isZero();
        assertThat(text.stdout()).containsPattern("lease +unknown: .*127\\.0\\.0\\.1:1").containsPattern("rowsByState +\\{pending=3\\}")
                .doesNotContain("leaseHolder", "null");

        CliRun json = CliRun.of("status", "--merchant", merchant, "--json", "--db-url", DB, "--redis-url", NO_REDIS);
        assertThat(json.exit()).as(json.both()).isZero();
        JsonNode report = new ObjectMapper().readTree(json.stdout());
        assertThat(report.get("leaseUnknown").asText()).contains("127.0.0.1:1");
        assertThat(report.get("leaseMillisLeft").isNull()).as("not 0: unknown").isTrue();
        assertThat(report.get("rowsByState").get("pending").asLong()).isEqualTo(3);

        CliRun control = CliRun.of("status", "--merchant", merchant, "--json", "--db-url", DB, "--redis-url", REDIS);
        JsonNode known = new ObjectMapper().readTree(control.stdout());
        assertThat(known.has("leaseUnknown")).as("control: " + control.both()).isFalse();
        assertThat(known.get("leaseMillisLeft").asLong()).isZero();
    }

    @Test
    void theBoardWithRedisUnreachableStillShowsEveryMerchantsRows() throws Exception {
        String merchant = seeded();
        CliRun text = CliRun.of("status", "--all", "--limit", "1000", "--db-url", DB, "--redis-url", NO_REDIS);
        assertThat(text.exit()).as(text.both()).isZero();
        assertThat(text.stdout()).containsPattern(merchant + " +\\? +\\? +\\? +3 +0 +0 +0 ")
                .containsPattern("leases: unknown \\(\\?\\): .*127\\.0\\.0\\.1:1");

        CliRun json = CliRun.of("status", "--all", "--json", "--limit", "1000", "--db-url", DB, "--redis-url", NO_REDIS);
        assertThat(json.exit()).as(json.both()).isZero();
        JsonNode page = new ObjectMapper().readTree(json.stdout());
        assertThat(page.get("leasesUnknown").asText()).contains("127.0.0.1:1");
        JsonNode mine = null;
        for (JsonNode row : page.get("rows")) {
            mine = row.get("merchant").asText().equals(merchant) ? row : mine;
        }
        assertThat(mine).as(json.stdout()).isNotNull();
        assertThat(mine.get("leaseMillisLeft").isNull()).as("not 0: unknown").isTrue();
        assertThat(mine.get("pending").asLong()).isEqualTo(3);

        CliRun control = CliRun.of("status", "--all", "--limit", "1000", "--db-url", DB, "--redis-url", REDIS);
        assertThat(control.exit()).as(control.both()).isZero();
        assertThat(control.stdout()).as("control").containsPattern(merchant + " +- +- +- +3 ").doesNotContain("leases: unknown");
    }

    @Test
    void theDatabaseUnreachableIsOneLineAndExit1() {
        for (String all : new String[] {"--all", "--merchant=m_1"}) {
            CliRun run = CliRun.of("status", all, "--db-url", "jdbc:postgresql://127.0.0.1:1/test", "--redis-url", REDIS);
            assertThat(run.exit()).as(run.both()).isEqualTo(FencedCli.RUNTIME_FAILURE);
            assertThat(run.oneLineError()).as(run.stderr()).isTrue();
            assertThat(run.stderr()).contains("database at jdbc:postgresql://127.0.0.1:1/test is unreachable");
            assertThat(run.stdout()).isEmpty();
        }
    }
}
