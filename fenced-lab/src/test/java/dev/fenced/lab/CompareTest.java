package dev.fenced.lab;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fenced.cli.FencedCli;
import dev.fenced.testing.servers.HeadlessChromium;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.jsoup.select.Elements;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The article's table, measured: the mechanisms without a fence are the negative controls of the
 * two with one. Real worker processes, real SIGSTOP/SIGCONT and SIGKILL, embedded servers.
 */
@org.junit.jupiter.api.TestInstance(org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS)
class CompareTest {
    @TempDir
    static Path dir; // static: injected before @BeforeAll
    private Path html;
    private JsonNode report;
    private String progress;

    /** One comparison run, shared: its measurements and its page are checked by separate tests. */
    @org.junit.jupiter.api.BeforeAll
    void compare() throws Exception {
        html = dir.resolve("report.html");
        PrintStream original = System.out;
        PrintStream originalErr = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(errors, true, StandardCharsets.UTF_8));
        int exit;
        try {
            exit = FencedCli.run("compare", "--refunds", "60", "--speed", "20", "--json", "--html", html.toString(), "--progress-every", "2s");
        } finally {
            System.setOut(original);
            System.setErr(originalErr);
        }
        assertThat(exit).as(errors.toString(StandardCharsets.UTF_8)).isZero();
        progress = errors.toString(StandardCharsets.UTF_8);
        report = new ObjectMapper().readTree(captured.toString(StandardCharsets.UTF_8));
    }

    @Test
    void onlyTheFenceKeepsStaleWritesOutAndOnlyTheIdempotencyKeyKeepsTheGatewayCallSingle() throws Exception {
        Map<String, JsonNode> results = new HashMap<>();
        for (JsonNode result : report.get("results")) {
            results.put(result.get("mechanism").asText(), result);
        }
        assertThat(results).containsOnlyKeys("ttl", "renewal", "check", "fence", "fence+idempotency", "ttl-5min");

        for (String unsafe : new String[] {"ttl", "renewal", "check", "ttl-5min"}) {
            JsonNode r = results.get(unsafe);
            assertThat(r.get("duplicates").asLong() + r.get("staleWritesAccepted").asLong())
                    .as("%s must show double refunds or accepted stale writes", unsafe).isPositive();
        }
        JsonNode fence = results.get("fence");
        assertThat(fence.get("staleWritesAccepted").asLong()).isZero();
        assertThat(fence.get("duplicates").asLong()).as("only the call in flight during the pause").isEqualTo(1);
        assertThat(fence.get("workerA").get("outcome").asText()).isEqualTo("FenceViolation");
        JsonNode safe = results.get("fence+idempotency");
        assertThat(safe.get("staleWritesAccepted").asLong()).isZero();
        assertThat(safe.get("duplicates").asLong()).isZero();
        assertThat(safe.get("lostOrStuck").asLong()).isZero();
        assertThat(safe.get("refunds").asLong()).isEqualTo(60);

        for (JsonNode row : report.get("rows")) {
            assertThat(row.get("verdict").asText()).as(row.get("mechanism").asText()).doesNotStartWith("DIFFERS");
            double blocked = row.get("blockedAfterCrashArticleSeconds").asDouble();
            double ttl = row.get("mechanism").asText().equals("ttl-5min") ? 300 : 30;
            assertThat(blocked).as("a crashed holder blocks the merchant for about its TTL").isBetween(ttl * 0.5, ttl * 1.5);
        }

        String page = Files.readString(html);
        assertThat(count(page, "<svg class=\"timeline\"")).isEqualTo(6);
        assertThat(count(page, "class=\"lane\"")).isEqualTo(18);
        assertThat(count(page, "class=\"pause\"")).isEqualTo(6);
        assertThat(page).as("self-contained: no scripts, no external assets").doesNotContain("<script").doesNotContain("<link")
                .doesNotContainPattern("(src|href)=\"https?:");
    }

    /** Without a terminal, progress is a line every interval on stderr, counting runs up to the last line; stdout is the JSON alone. */
    @Test
    void progressIsPeriodicLinesOnStderrNeverInTheJson() {
        Pattern line = Pattern.compile("compare: (\\d+)/12 runs \\((\\d+) %\\), \\d+\\.\\d/s(, about \\d+ s left)?");
        List<Long> counts = progress.lines().map(line::matcher).filter(Matcher::matches).map(m -> Long.parseLong(m.group(1))).toList();
        assertThat(counts).as(progress).hasSizeGreaterThanOrEqualTo(3).isSorted();
        assertThat(counts.get(counts.size() - 1)).isLessThanOrEqualTo(12);
        assertThat(progress.strip().lines().reduce((a, b) -> b).orElseThrow()).matches("compare: 12/12 runs in \\d+\\.\\d s");
        assertThat(report.has("rows")).as("stdout parsed as one JSON document").isTrue();
    }

    /**
     * Opens the report in headless Chromium and reads it back: the header's metadata, one time axis
     * shared by every run, the legend, the counts written beside each run's marks against the JSON
     * measurements, and the outage bars. Keeps screenshots at a desktop and a phone width in
     * {@code target/report-screenshots} (CI's artifact; the README's picture is one of them).
     */
    @Test
    void theReportReadsBackInARealBrowser() throws Exception {
        HeadlessChromium browser = HeadlessChromium.in(dir);
        Document dom = browser.dom(html);

        assertThat(dom.select("dd[data-meta=version]").text()).isEqualTo("fenced " + FencedCli.VERSION);
        assertThat(dom.select("dd[data-meta=redis]").text()).startsWith("redis-server ");
        assertThat(dom.select("dd[data-meta=database]").text()).startsWith("PostgreSQL ");
        assertThat(dom.select("dd[data-meta=speed]").text()).startsWith("x20");
        assertThat(dom.select("dd[data-meta=date]").text()).isEqualTo(report.get("environment").get("generatedAt").asText());

        Elements figures = dom.select("figure.run");
        assertThat(figures).hasSize(report.get("results").size());
        List<String> axis = figures.get(0).select("g.tick").eachAttr("data-seconds");
        assertThat(axis.get(0)).isEqualTo("0");
        assertThat(figures.get(0).select("g.tick text").eachText()).allMatch(label -> label.endsWith(" s"));
        double latest = 0;
        for (JsonNode result : report.get("results")) {
            long origin = 0; // article second 0: worker A takes its lease
            for (JsonNode entry : result.get("timeline")) {
                if (entry.get("worker").asText().equals("A") && entry.get("event").asText().equals("acquired")) {
                    origin = entry.get("elapsedMs").asLong();
                    break;
                }
            }
            for (JsonNode entry : result.get("timeline")) {
                if (!entry.get("worker").asText().equals("demo")) { // the orchestrator's notes are not drawn
                    latest = Math.max(latest, (entry.get("elapsedMs").asLong() - origin) * result.get("speed").asDouble() / 1000);
                }
            }
        }
        assertThat(Double.parseDouble(axis.get(axis.size() - 1))).as("the axis reaches the latest event of any run, in article seconds")
                .isGreaterThanOrEqualTo(latest);
        for (Element figure : figures) {
            assertThat(figure.select("g.tick").eachAttr("data-seconds")).as("one axis shared by every run").isEqualTo(axis);
        }

        assertThat(dom.select("li.legend-entry").eachAttr("data-kind")).contains("lease", "believed", "pause", "stale", "refused",
                "duplicate");
        assertThat(dom.select("li.legend-entry").eachText()).allMatch(text -> !text.isBlank());

        for (JsonNode result : report.get("results")) {
            Element figure = dom.selectFirst("figure.run[data-mechanism=" + result.get("mechanism").asText() + "][data-run="
                    + result.get("run").asInt() + "]");
            assertThat(figure).as(result.get("mechanism").asText()).isNotNull();
            long stale = result.get("staleWritesAccepted").asLong();
            long duplicates = result.get("duplicates").asLong();
            long refused = 0;
            for (JsonNode entry : result.get("timeline")) {
                refused += entry.get("event").asText().equals("violation") ? 1 : 0;
            }
            assertThat(count(figure, "stale")).as("stale writes written beside %s", result.get("mechanism")).isEqualTo(stale);
            assertThat(figure.select("circle.stale")).as("one mark per stale write").hasSize((int) stale);
            assertThat(count(figure, "duplicate")).isEqualTo(duplicates);
            assertThat(count(figure, "refused")).isEqualTo(refused);
            assertThat(figure.select("g.pause")).hasSize(1);
            assertThat(figure.select("g.lease text").eachText()).contains("token " + result.get("workerA").get("token").asLong());
        }

        Elements outages = dom.select("g.outage-bar");
        assertThat(outages).hasSize(report.get("rows").size());
        for (JsonNode row : report.get("rows")) {
            Element bar = dom.selectFirst("g.outage-bar[data-mechanism=" + row.get("mechanism").asText() + "]");
            assertThat(bar).isNotNull();
            assertThat(Double.parseDouble(bar.attr("data-seconds"))).isEqualTo(row.get("blockedAfterCrashArticleSeconds").asDouble());
        }

        Path screenshots = Files.createDirectories(Path.of("target", "report-screenshots"));
        BufferedImage desktop = browser.screenshot(html, screenshots.resolve("compare-report.png"), 1000, 2600);
        assertThat(HeadlessChromium.colouredPixels(desktop, 0, desktop.getWidth())).as("lease bars and marks drawn in colour")
                .isGreaterThan(2000);
        BufferedImage phone = browser.screenshot(html, screenshots.resolve("compare-report-phone.png"), 390, 2600);
        assertThat(HeadlessChromium.colouredPixels(phone, 0, phone.getWidth())).as("on a phone the timelines still show").isGreaterThan(500);
    }

    /** The figure a run's count of that kind says, 0 when it writes none. */
    private static long count(Element figure, String kind) {
        return figure.select("text.count[data-kind=" + kind + "]").stream().mapToLong(e -> Long.parseLong(e.attr("data-count"))).sum();
    }

    private static int count(String text, String needle) {
        Matcher m = Pattern.compile(Pattern.quote(needle)).matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }
}
