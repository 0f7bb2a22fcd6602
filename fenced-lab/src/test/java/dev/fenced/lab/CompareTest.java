package dev.fenced.lab;

import dev.fenced.cli.FencedCli;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
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

    /** One comparison run, shared: its measurements and its page are checked by separate tests. */
    @org.junit.jupiter.api.BeforeAll
    void compare() throws Exception {
        html = dir.resolve("report.html");
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        int exit;
        try {
            exit = FencedCli.run("compare", "--refunds", "60", "--speed", "20", "--json", "--html", html.toString());
        } finally {
            System.setOut(original);
        }
        assertThat(exit).isZero();
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
        assertThat(count(page, "<svg")).isEqualTo(6);
        assertThat(count(page, "class=\"lane\"")).isEqualTo(18);
        assertThat(count(page, "class=\"pause\"")).isEqualTo(6);
        assertThat(page).as("self-contained: no scripts, no external assets").doesNotContain("<script").doesNotContain("<link")
                .doesNotContainPattern("(src|href)=\"https?:");
    }

    /** Renders the report in headless Chromium (skipped without it, except in CI), and checks the picture is not blank. */
    @Test
    void theReportRendersInARealBrowser() throws Exception {
        Path chromium = Path.of("/usr/bin/chromium");
        if (System.getenv("FENCED_REQUIRE_CHROMIUM") == null) {
            Assumptions.assumeTrue(Files.isExecutable(chromium), "no /usr/bin/chromium to render the report");
        }
        Path png = dir.resolve("report.png");
        Process process = new ProcessBuilder(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--user-data-dir=" + dir.resolve("profile"), "--window-size=1000,1400", "--screenshot=" + png, html.toUri().toString())
                .redirectErrorStream(true).start();
        process.getInputStream().transferTo(OutputStreamSink.INSTANCE);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        java.awt.image.BufferedImage image = javax.imageio.ImageIO.read(png.toFile());
        assertThat(image).isNotNull();
        int coloured = 0;
        for (int y = 0; y < image.getHeight(); y += 2) {
            for (int x = 0; x < image.getWidth(); x += 2) {
                int rgb = image.getRGB(x, y);
                int r = (rgb >> 16) & 0xff;
                int g = (rgb >> 8) & 0xff;
                int b = rgb & 0xff;
                if (Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b)) > 60) {
                    coloured++;
                }
            }
        }
        assertThat(coloured).as("lease bars and markers drawn in colour").isGreaterThan(500);
    }

    private static int count(String text, String needle) {
        Matcher m = Pattern.compile(Pattern.quote(needle)).matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    private static final class OutputStreamSink extends java.io.OutputStream {
        static final OutputStreamSink INSTANCE = new OutputStreamSink();

        @Override
        public void write(int b) {
        }
    }
}
