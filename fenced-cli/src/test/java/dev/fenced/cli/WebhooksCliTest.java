package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.WebhookEvent;
import dev.fenced.provider.WebhookSignature;
import dev.fenced.testing.servers.OwnDatabase;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code fenced webhooks} as a real process: the simulated gateway's signed events move the rows
 * to their final state, a forged delivery is refused and writes nothing, SIGTERM stops it with 0,
 * and a missing or malformed secret is a one-line usage error that does not show the secret.
 */
class WebhooksCliTest {
    private static final String DB = TestDatabases.postgresUrl();
    private static final String SECRET = "whsec_cli_" + UUID.randomUUID().toString().substring(0, 8);

    @Test
    void theProvidersEventsMoveRowsToTheirFinalStateAndAForgedOneWritesNothing() throws Exception {
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        CliRun seeded = CliRun.of("seed", "--merchant", merchant, "--refunds", "6", "--total", "60.00", "--id-prefix", merchant + "_r",
                "--db-url", DB);
        assertThat(seeded.exit()).as(seeded.stderr()).isZero();
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), FencedCli.class.getName(), "webhooks", "--port", "0", "--db-url", DB,
                "--metrics-port", "0");
        builder.environment().put("FENCED_WEBHOOK_SECRETS", "whsec_retired_1," + SECRET);
        Process receiver = builder.redirectError(ProcessBuilder.Redirect.PIPE).start();
        List<String> output = new CopyOnWriteArrayList<>();
        try {
            String url = listening(receiver, output);
            // The refunds stay pending for a second of the gateway's (real) clock, then settle; a third fail late.
            try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).seed(7)
                    .lifecycle(Duration.ofSeconds(1), 0.34).webhooks(URI.create(url), SECRET).build())) {
                CliRun settled = CliRun.of("settle", "--merchant", merchant, "--redis-url", TestRedis.uri(), "--db-url", DB,
                        "--gateway-url", gateway.url());
                assertThat(settled.exit()).as(settled.both()).isZero();
                // The gateway delivers each final event once its refund settles, on its own thread: wait for the rows to show it.
                try {
                    await("every row final as the gateway says").atMost(Duration.ofSeconds(30))
                            .until(() -> !finalStates(gateway, merchant).containsValue("sent") && finalStates(gateway, merchant).equals(states(merchant)));
                } catch (org.awaitility.core.ConditionTimeoutException e) {
                    throw new AssertionError("expected " + finalStates(gateway, merchant) + ", got " + states(merchant) + "; "
                            + gateway.webhookStats() + "; fenced webhooks said:\n" + String.join("\n", output), e);
                }
                Map<String, String> expected = finalStates(gateway, merchant);
                assertThat(expected.values()).contains("settled", "returned");
            }
            String row = merchant + "_r001";
            execute("UPDATE refund SET state = 'sent' WHERE id = ?", row);
            // The row's own refund, so that only the signature stands between this event and the row.
            GatewayRefund refund = new GatewayRefund(column(DB, row, "gateway_reference"), "k", row, merchant,
                    new java.math.BigDecimal(column(DB, row, "amount")), "EUR", 0, Map.of(), "succeeded", null);
            byte[] body = new WebhookEvent("evt_forged_" + merchant, WebhookEvent.REFUND_UPDATED, 0, refund).toJson();
            HttpResponse<String> forged = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                    .header(WebhookSignature.HEADER, WebhookSignature.header(System.currentTimeMillis() / 1000, body, List.of("whsec_guess")))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(forged.statusCode()).isEqualTo(400);
            assertThat(forged.body()).contains("no v1 signature matches");
            assertThat(states(merchant).get(row)).as("nothing written for a forged event").isEqualTo("sent");
            String metrics = output.stream().filter(line -> line.startsWith("webhooks: metrics at ")).findFirst().orElseThrow()
                    .substring("webhooks: metrics at ".length());
            String scrape = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(metrics)).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertThat(scrape).contains("settlement_provider_news_total{outcome=\"rejected\",source=\"webhook\"} 1.0")
                    .containsPattern("settlement_provider_news_total\\{outcome=\"settled\",source=\"webhook\"} [1-9]")
                    .containsPattern("settlement_provider_news_total\\{outcome=\"returned\",source=\"webhook\"} [1-9]");

            new ProcessBuilder("kill", "-TERM", Long.toString(receiver.pid())).start().waitFor();
            assertThat(receiver.waitFor(30, TimeUnit.SECONDS)).as("stopped").isTrue();
            assertThat(receiver.exitValue()).isZero();
            assertThat(String.join("\n", output)).contains("settled", "returned", "refused").doesNotContain(SECRET, "whsec_retired_1");
        } finally {
            receiver.destroyForcibly();
        }
    }

    /**
     * Every event lost: the same process, given the gateway, polls the refunds left without news
     * past {@code --poll-after} and moves them to their final state. Nothing was delivered, so
     * only the poll can have moved them (the control is the gateway's count of deliveries: 0).
     */
    @Test
    void refundsWhoseEventsAreLostArePolledPastTheDeadline() throws Exception {
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        List<String> output = new CopyOnWriteArrayList<>();
        // A database of its own: the poll covers every merchant's sent rows, and the shared one holds other tests' rows.
        try (OwnDatabase own = OwnDatabase.on(DB); PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).seed(7)
                .lifecycle(Duration.ZERO, 0.5).webhooks(URI.create("http://127.0.0.1:9/webhooks"), SECRET).webhookFaults(1.0, 0, 0).build())) {
            ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    System.getProperty("java.class.path"), FencedCli.class.getName(), "webhooks", "--port", "0", "--db-url", own.url(),
                    "--gateway-url", gateway.url(), "--poll-after", "1s", "--poll-every", "200ms");
            CliRun seeded = CliRun.of("seed", "--merchant", merchant, "--refunds", "4", "--total", "40.00", "--id-prefix", merchant + "_r",
                    "--db-url", own.url());
            assertThat(seeded.exit()).as(seeded.stderr()).isZero();
            builder.environment().put("FENCED_WEBHOOK_SECRETS", SECRET);
            Process receiver = builder.start();
            try {
                listening(receiver, output);
                CliRun settled = CliRun.of("settle", "--merchant", merchant, "--redis-url", TestRedis.uri(), "--db-url", own.url(),
                        "--gateway-url", gateway.url());
                assertThat(settled.exit()).as(settled.both()).isZero();
                // The poll runs on the process's schedule once the rows are a second old: wait for it to have moved them and said so.
                await("every row final").atMost(Duration.ofSeconds(30)).until(() -> !finalStates(gateway, merchant).containsValue("sent")
                        && finalStates(gateway, merchant).equals(states(own.url(), merchant))
                        && output.stream().anyMatch(line -> line.startsWith("webhooks: poll " + merchant + ": ")));
                assertThat(states(own.url(), merchant).values()).contains("settled", "returned");
                assertThat(gateway.webhookStats().delivered()).as("no event delivered").isZero();
                assertThat(gateway.webhookStats().lost()).as("one event per refund, final at once").isEqualTo(4);
            } finally {
                receiver.destroyForcibly();
                receiver.waitFor(10, TimeUnit.SECONDS); // its connections closed before its database is dropped
            }
        }
    }

    @Test
    void aMissingOrMalformedSecretIsAOneLineUsageError() {
        CliRun none = CliRun.of("webhooks", "--db-url", DB, "--webhook-secret", "");
        assertThat(none.exit()).as(none.both()).isEqualTo(2);
        assertThat(none.oneLineError()).as(none.stderr()).isTrue();
        assertThat(none.stderr()).contains("--webhook-secret");
        CliRun spaced = CliRun.of("webhooks", "--db-url", DB, "--webhook-secret", "whsec_Q9 Z");
        assertThat(spaced.exit()).as(spaced.both()).isEqualTo(2);
        assertThat(spaced.oneLineError()).as(spaced.stderr()).isTrue();
        assertThat(spaced.stderr()).doesNotContain("Q9");
        CliRun zero = CliRun.of("webhooks", "--db-url", DB, "--webhook-secret", SECRET, "--poll-every", "0s");
        assertThat(zero.exit()).as(zero.both()).isEqualTo(2);
        assertThat(zero.stderr()).contains("--poll-every must be positive");
        CliRun instant = CliRun.of("webhooks", "--db-url", DB, "--webhook-secret", SECRET, "--tolerance", "500ms");
        assertThat(instant.exit()).isEqualTo(2);
        assertThat(instant.stderr()).contains("--tolerance must be at least 1s");
        assertThat(spaced.stderr()).contains("--webhook-secret: a webhook secret must be 1 to 255 characters without whitespace");
        CliRun nowhere = CliRun.of("webhooks", "--db-url", DB, "--webhook-secret", SECRET, "--bind", "no-such-host.invalid");
        assertThat(nowhere.exit()).as(nowhere.both()).isEqualTo(2);
        assertThat(nowhere.oneLineError()).as(nowhere.stderr()).isTrue();
        CliRun noDb = CliRun.of("webhooks", "--webhook-secret", SECRET, "--db-url", "");
        assertThat(noDb.exit()).isEqualTo(2);
        assertThat(noDb.both()).doesNotContain(SECRET);
    }

    /** Reads the process's output until it says where it listens; keeps every later line of both streams in {@code output}. */
    private static String listening(Process process, List<String> output) throws Exception {
        Thread errors = new Thread(() -> new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))
                .lines().forEach(output::add));
        errors.setDaemon(true);
        errors.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        Pattern at = Pattern.compile("webhooks listening on (http://\\S+/webhooks)");
        for (String line; (line = out.readLine()) != null; ) {
            output.add(line);
            Matcher matcher = at.matcher(line);
            if (matcher.find()) {
                Thread rest = new Thread(() -> out.lines().forEach(output::add));
                rest.setDaemon(true);
                rest.start();
                return matcher.group(1);
            }
        }
        throw new AssertionError("fenced webhooks never said where it listens:\n" + String.join("\n", output));
    }

    /** What the gateway's final word makes of each row; a refund still pending maps to sent. */
    private static Map<String, String> finalStates(PaymentGateway gateway, String merchant) {
        Map<String, String> states = new TreeMap<>();
        gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).forEach(r -> states.put(r.reference(),
                switch (r.status()) {
                    case GatewayRefund.SUCCEEDED -> "settled";
                    case GatewayRefund.PENDING -> "sent";
                    default -> "returned";
                }));
        return states;
    }

    private static Map<String, String> states(String merchant) throws Exception {
        return states(DB, merchant);
    }

    private static String column(String db, String id, String column) throws Exception {
        try (Connection c = DriverManager.getConnection(db); PreparedStatement s = c.prepareStatement("SELECT " + column + " FROM refund WHERE id = ?")) {
            s.setString(1, id);
            try (ResultSet rs = s.executeQuery()) {
                assertThat(rs.next()).as(id).isTrue();
                return rs.getString(1);
            }
        }
    }

    private static Map<String, String> states(String db, String merchant) throws Exception {
        Map<String, String> states = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(db); PreparedStatement s = c.prepareStatement("SELECT id, state FROM refund WHERE merchant = ?")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    states.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return states;
    }

    private static void execute(String sql, String value) throws Exception {
        try (Connection c = DriverManager.getConnection(DB); PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, value);
            s.executeUpdate();
        }
    }
}
