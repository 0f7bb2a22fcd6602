package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fenced.Lease;
import dev.fenced.fleet.Broker;
import dev.fenced.fleet.JobStream;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestNats;
import dev.fenced.testing.servers.TestRedis;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code status --all}: one row per merchant in merchant order, paged, with the lease holder and
 * the rows by state; {@code --watch} draws again and again (without a terminal, one board after
 * another). The shared test database holds other tests' merchants too, so the test finds its own
 * by paging through every merchant.
 */
class StatusAllTest {
    private static final String DB = TestDatabases.postgresUrl();
    private static final String REDIS = TestRedis.uri();

    @Test
    void everyMerchantHasARowAndThePagesCoverThemAll() throws Exception {
        String prefix = "m_all" + UUID.randomUUID().toString().substring(0, 6);
        List<String> mine = List.of(prefix + "a", prefix + "b", prefix + "c");
        for (String merchant : mine) {
            CliRun seeded = CliRun.of("seed", "--merchant", merchant, "--refunds", "4", "--total", "40.00", "--db-url", DB);
            assertThat(seeded.exit()).as(seeded.both()).isZero();
        }
        CliRun first = CliRun.of("status", "--all", "--json", "--limit", "1000", "--db-url", DB, "--redis-url", REDIS);
        assertThat(first.exit()).as(first.both()).isZero();
        JsonNode page = new ObjectMapper().readTree(first.stdout());
        int merchants = page.get("merchants").asInt();
        assertThat(merchants).isGreaterThanOrEqualTo(3);

        // Walk every page of 2 and collect the merchants in order.
        List<String> seen = new java.util.ArrayList<>();
        for (int offset = 0; offset < merchants; offset += 2) {
            CliRun run = CliRun.of("status", "--all", "--json", "--limit", "2", "--offset", Integer.toString(offset), "--db-url", DB,
                    "--redis-url", REDIS);
            assertThat(run.exit()).as(run.both()).isZero();
            for (JsonNode row : new ObjectMapper().readTree(run.stdout()).get("rows")) {
                seen.add(row.get("merchant").asText());
                if (mine.contains(row.get("merchant").asText())) {
                    assertThat(row.get("pending").asInt()).isEqualTo(4);
                    assertThat(row.get("holder").isNull()).isTrue();
                }
            }
        }
        assertThat(seen).hasSize(merchants).doesNotHaveDuplicates().containsAll(mine); // in the database's collation order

        CliRun text = CliRun.of("status", "--all", "--limit", "2", "--db-url", DB, "--redis-url", REDIS);
        assertThat(text.stdout()).startsWith("MERCHANT").contains("merchants 1-2 of " + merchants)
                .contains(merchants > 2 ? "next page: --offset 2" : "");

        CliRun watched = CliRun.of("status", "--all", "--limit", "1", "--watch", "100ms", "--watch-times", "3", "--db-url", DB,
                "--redis-url", REDIS);
        assertThat(watched.exit()).as(watched.both()).isZero();
        assertThat(watched.stdout().lines().filter(line -> line.startsWith("MERCHANT"))).as("three boards, one after another").hasSize(3);
        assertThat(watched.stdout()).as("no terminal: nothing redrawn in place").doesNotContain("\033[");
    }

    /** With a worker holding a merchant's lease and a job waiting on the stream, the board names the worker and counts the job. */
    @Test
    void theBoardShowsTheWorkersHoldingLeasesAndTheJobStream() throws Exception {
        // "0..." sorts before every other test's merchants: on the first page however many the shared database holds.
        String merchant = "0_w" + UUID.randomUUID().toString().substring(0, 8);
        String stream = "T_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10).toUpperCase(java.util.Locale.ROOT);
        CliRun seeded = CliRun.of("seed", "--merchant", merchant, "--refunds", "3", "--total", "30.00", "--db-url", DB, "--enqueue",
                "--nats-url", TestNats.url(), "--stream", stream);
        assertThat(seeded.exit()).as(seeded.both()).isZero();
        try (RedisLeaseStore leases = RedisLeaseStore.builder(REDIS).ownerLabel("worker-7").build();
             Lease held = leases.tryAcquire(Merchants.resource(merchant), Duration.ofSeconds(30)).orElseThrow();
             io.nats.client.Connection nats = Broker.connect(TestNats.url(), Duration.ofSeconds(5), "cleanup")) {
            try {
                CliRun json = CliRun.of("status", "--all", "--json", "--limit", "1000", "--db-url", DB, "--redis-url", REDIS, "--nats-url",
                        TestNats.url(), "--stream", stream);
                assertThat(json.exit()).as(json.both()).isZero();
                JsonNode page = new ObjectMapper().readTree(json.stdout());
                boolean named = false;
                for (JsonNode holder : page.get("holders")) {
                    if (holder.get("holder").asText().equals("worker-7")) {
                        named = true;
                        assertThat(holder.get("merchants").toString()).contains(merchant);
                    }
                }
                assertThat(named).as(json.stdout()).isTrue();
                assertThat(page.get("jobs").get("waiting").asLong()).isEqualTo(1);

                CliRun text = CliRun.of("status", "--all", "--limit", "1000", "--db-url", DB, "--redis-url", REDIS, "--nats-url",
                        TestNats.url(), "--stream", stream);
                assertThat(text.stdout()).contains("workers holding leases on this page: ").contains("worker-7 (")
                        .contains("job stream: 1 waiting, 0 handed back (waiting for redelivery), 0 in progress, 0 redelivered, 0 dead letters");

                CliRun missing = CliRun.of("status", "--all", "--limit", "1", "--db-url", DB, "--redis-url", REDIS, "--nats-url",
                        TestNats.url(), "--stream", stream + "_NONE");
                assertThat(missing.exit()).isZero();
                assertThat(missing.stdout()).contains("job stream: no stream " + stream + "_NONE");
            } finally {
                JobStream.builder().stream(stream).build().delete(nats);
            }
        }
    }

    @Test
    void mistakesAreOneLine() {
        for (List<String> args : List.of(
                List.of("status", "--db-url", DB, "--redis-url", REDIS),
                List.of("status", "--all", "--merchant", "m_1", "--db-url", DB, "--redis-url", REDIS),
                List.of("status", "--all", "--limit", "0", "--db-url", DB, "--redis-url", REDIS),
                List.of("status", "--all", "--offset", "-1", "--db-url", DB, "--redis-url", REDIS),
                List.of("status", "--all", "--watch", "1ms", "--db-url", DB, "--redis-url", REDIS),
                List.of("status", "--merchant", "m_1", "--watch", "2s", "--db-url", DB, "--redis-url", REDIS))) {
            CliRun run = CliRun.of(args);
            assertThat(run.exit()).as(String.join(" ", args) + ": " + run.stderr()).isEqualTo(FencedCli.USAGE);
            assertThat(run.oneLineError()).as(run.stderr()).isTrue();
        }
    }
}
