package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.testing.servers.HeadlessChromium;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.jsoup.nodes.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fenced timeline}: the event lines of a real settle run (with refunds the gateway refuses)
 * drawn as a page, read back in headless Chromium: one lane, the lease with the run's token, one
 * mark per write and per refusal, counts that match the lines. Bad input is one line, exit 2.
 */
class TimelineCliTest {
    private static final String DB = TestDatabases.postgresUrl();
    private static final String REDIS = TestRedis.uri();

    @TempDir
    Path dir;

    @Test
    void aRealRunsEventLinesBecomeATimeline() throws Exception {
        String merchant = "m_t" + UUID.randomUUID().toString().substring(0, 8);
        assertThat(CliRun.of("seed", "--merchant", merchant, "--refunds", "40", "--total", "200.00", "--id-prefix", merchant + "_r",
                "--db-url", DB).exit()).isZero();
        Path events = dir.resolve("events.jsonl");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(2))
                .refuseAbove(new BigDecimal("5.00")).build())) {
            CliRun settle = CliRun.of("settle", "--events", "--merchant", merchant, "--redis-url", REDIS, "--db-url", DB, "--gateway-url",
                    gateway.url());
            Files.writeString(events, "a line that is not an event\n" + settle.stdout(), StandardCharsets.UTF_8);
        }
        List<String> lines = Files.readAllLines(events);
        long writes = lines.stream().filter(l -> l.contains("\"type\":\"claimed\"") || l.contains("\"type\":\"confirmed\"")).count();
        long refused = lines.stream().filter(l -> l.contains("\"type\":\"failed\"")).count();
        assertThat(refused).as("the gateway refused the refunds above 5.00").isPositive();
        long token = lines.stream().filter(l -> l.contains("\"type\":\"acquired\"")).map(EventCodec::read).flatMap(java.util.Optional::stream)
                .mapToLong(l -> ((EventLine.Event) l).token()).findFirst().orElseThrow();

        Path html = dir.resolve("timeline.html");
        CliRun run = CliRun.of("timeline", events.toString(), "--html", html.toString());
        assertThat(run.exit()).as(run.both()).isZero();
        assertThat(run.stdout()).startsWith("timeline of " + (lines.size() - 1) + " events (1 workers, 1 merchants,")
                .contains("written to " + html);

        Document dom = HeadlessChromium.in(dir).dom(html);
        assertThat(dom.select("g.lane")).hasSize(1);
        assertThat(dom.select("g.lease text").eachText()).containsExactly("token " + token);
        assertThat(dom.select("rect.write")).hasSize((int) writes);
        assertThat(dom.selectFirst("text.count[data-kind=write]").attr("data-count")).isEqualTo(Long.toString(writes));
        assertThat(dom.select("rect.failed")).hasSize((int) refused);
        assertThat(dom.selectFirst("text.count[data-kind=failed]").attr("data-count")).isEqualTo(Long.toString(refused));
        assertThat(dom.select("li.legend-entry").eachAttr("data-kind")).contains("lease", "write", "failed");
        assertThat(dom.select("dd[data-meta=merchants]").text()).isEqualTo("1: " + merchant);
        assertThat(dom.select("dd[data-meta=events]").text()).contains("1 other lines skipped");
        assertThat(dom.select("g.tick").eachAttr("data-seconds").get(0)).isEqualTo("0");
    }

    @Test
    void badInputIsOneLine() throws Exception {
        Path notEvents = Files.writeString(dir.resolve("notes.txt"), "hello\n{\"type\":\"nonsense\"}\n");
        Path html = dir.resolve("out.html");
        Path oneEvent = Files.writeString(dir.resolve("one.jsonl"), EventCodec.write(new EventLine.Event(
                dev.fenced.settlement.SettlementEvent.Type.ACQUIRED, "w", "m_1", null, 1, null, 1_000, 1)) + "\n");
        Path noWorker = Files.writeString(dir.resolve("no-worker.jsonl"), "{\"type\":\"claimed\",\"refund\":\"r_1\",\"token\":1}\n");
        for (List<String> args : List.of(
                List.of("timeline", oneEvent.toString(), "--html", dir.resolve("no/such/dir/out.html").toString()),
                List.of("timeline", noWorker.toString(), "--html", html.toString()),
                List.of("timeline", dir.resolve("missing.jsonl").toString(), "--html", html.toString()),
                List.of("timeline", notEvents.toString(), "--html", html.toString()),
                List.of("timeline", dir.toString(), "--html", html.toString()),
                List.of("timeline", notEvents.toString()))) {
            CliRun run = CliRun.of(args);
            assertThat(run.exit()).as(String.join(" ", args) + ": " + run.stderr()).isEqualTo(FencedCli.USAGE);
            assertThat(run.oneLineError()).as(run.stderr()).isTrue();
        }
        assertThat(html).doesNotExist();
    }
}
