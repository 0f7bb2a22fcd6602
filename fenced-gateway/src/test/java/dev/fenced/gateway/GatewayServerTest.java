package dev.fenced.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.testing.ManualScheduler;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway's HTTP contract, spoken in raw HTTP so that it pins the wire format rather than a
 * client's reading of it.
 */
class GatewayServerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private static GatewayConfig.Builder fast() {
        return GatewayConfig.builder().latency(Duration.ZERO);
    }

    /** A client with no pooled connections, so that a refused connection is seen as one. */
    private static HttpClient http() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT).build();
    }

    private static String body(String reference, String merchant, Object amount, String currency) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("reference", reference);
        body.put("merchant", merchant);
        body.put("amount", amount);
        body.put("currency", currency);
        return JSON.writeValueAsString(body);
    }

    private static HttpResponse<String> post(HttpClient http, PaymentGateway gateway, String key, String body)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(gateway.url() + "/refunds")).timeout(TIMEOUT)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> refund(HttpClient http, PaymentGateway gateway, String key, String amount)
            throws IOException, InterruptedException {
        return post(http, gateway, key, body(key, "m_4471", amount, "EUR"));
    }

    private static HttpResponse<String> get(HttpClient http, PaymentGateway gateway, String pathAndQuery)
            throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(gateway.url() + pathAndQuery)).timeout(TIMEOUT).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode json(HttpResponse<String> response) throws IOException {
        return JSON.readTree(response.body());
    }

    private static List<String> ids(JsonNode refunds) {
        List<String> ids = new ArrayList<>();
        refunds.forEach(r -> ids.add(r.get("id").asText()));
        return ids;
    }

    @Test
    void aReusedKeyWithAnotherAmountIsAConflictAndCreatesNothing() throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(fast().build())) {
            HttpClient http = http();
            HttpResponse<String> created = refund(http, gateway, "r_815", "70.25");
            assertThat(created.statusCode()).isEqualTo(201);
            HttpResponse<String> replayed = refund(http, gateway, "r_815", "70.25");
            assertThat(replayed.statusCode()).isEqualTo(200);
            assertThat(json(replayed)).isEqualTo(json(created));

            HttpResponse<String> conflict = refund(http, gateway, "r_815", "70.26");
            assertThat(conflict.statusCode()).isEqualTo(409);
            JsonNode answer = json(conflict);
            assertThat(answer.get("code").asText()).isEqualTo("idempotency_key_reused");
            assertThat(answer.get("error").asText()).contains("r_815");
            assertThat(answer.get("refund")).isEqualTo(json(created));
            assertThat(post(http, gateway, "r_815", body("r_815", "m_other", "70.25", "EUR")).statusCode()).isEqualTo(409);
            assertThat(gateway.ledger()).hasSize(1);
        }
    }

    @Test
    void aRaceOnOneKeyWithTwoBodiesCreatesOneRefundAndRefusesEveryMismatch() throws Exception {
        int threads = 32;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (PaymentGateway gateway = PaymentGateway.start(fast().build())) {
            // One client each, kept across rounds: warm connections make the requests land together.
            List<HttpClient> clients = Stream.generate(GatewayServerTest::http).limit(threads).toList();
            for (int round = 0; round < 20; round++) {
                String key = "r_race_" + round;
                List<Map.Entry<String, HttpResponse<String>>> answers = race(pool, clients, gateway, key);
                List<GatewayRefund> created = gateway.ledger().stream().filter(r -> r.idempotencyKey().equals(key)).toList();
                assertThat(created).hasSize(1);
                String winner = created.get(0).amount().toPlainString();
                for (Map.Entry<String, HttpResponse<String>> answer : answers) {
                    HttpResponse<String> response = answer.getValue();
                    if (answer.getKey().equals(winner)) {
                        assertThat(response.statusCode()).as(response.body()).isIn(200, 201);
                        assertThat(json(response).get("id").asText()).isEqualTo(created.get(0).id());
                    } else {
                        assertThat(response.statusCode()).as("%s after %s won: %s", answer.getKey(), winner, response.body())
                                .isEqualTo(409);
                    }
                }
                assertThat(answers).filteredOn(answer -> answer.getValue().statusCode() == 201).hasSize(1);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Sends the same key from every client at once, half with 70.25 and half with 70.26: (amount, answer). */
    private static List<Map.Entry<String, HttpResponse<String>>> race(ExecutorService pool, List<HttpClient> clients,
                                                                      PaymentGateway gateway, String key) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Map.Entry<String, HttpResponse<String>>>> sent = new ArrayList<>();
        for (int i = 0; i < clients.size(); i++) {
            HttpClient http = clients.get(i);
            String amount = i % 2 == 0 ? "70.25" : "70.26";
            sent.add(pool.submit(() -> {
                go.await();
                return Map.entry(amount, refund(http, gateway, key, amount));
            }));
        }
        go.countDown();
        List<Map.Entry<String, HttpResponse<String>>> answers = new ArrayList<>();
        for (Future<Map.Entry<String, HttpResponse<String>>> answer : sent) {
            answers.add(answer.get(30, TimeUnit.SECONDS));
        }
        return answers;
    }

    @Test
    void malformedRefundsAreRefusedCheaplyAndCreateNothing() throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(fast().build())) {
            HttpClient http = http();
            for (Object amount : new Object[] {"1e100000", new BigDecimal("1e100000"), "1e-100000", "-1", "0", "1.001",
                    "99999999999.99", "abc", "", true}) {
                HttpResponse<String> answer = post(http, gateway, "k", body("r_1", "m_1", amount, "EUR"));
                assertThat(answer.statusCode()).as("amount %s", amount).isEqualTo(400);
                assertThat(answer.body()).as("the error echoes a short form of the amount").hasSizeLessThan(200);
            }
            long before = System.nanoTime();
            assertThat(get(http, gateway, "/ledger").statusCode()).isEqualTo(200);
            assertThat(Duration.ofNanos(System.nanoTime() - before)).isLessThan(Duration.ofSeconds(1));

            assertThat(post(http, gateway, "k", "{\"reference\":\"" + "x".repeat(70 * 1024) + "\"}").statusCode()).isEqualTo(413);
            HttpResponse<String> longKey = refund(http, gateway, "k".repeat(300), "1.00");
            assertThat(longKey.statusCode()).isEqualTo(400);
            assertThat(longKey.body()).contains("Idempotency-Key").hasSizeLessThan(300);
            assertThat(post(http, gateway, "k", body("r".repeat(65), "m_1", "1.00", "EUR")).statusCode()).isEqualTo(400);
            assertThat(post(http, gateway, "k", body("r_1", "m".repeat(65), "1.00", "EUR")).statusCode()).isEqualTo(400);
            assertThat(post(http, gateway, "k", body("r_1", "m_1", "1.00", "eur")).statusCode()).isEqualTo(400);
            assertThat(post(http, gateway, "k", "not json").statusCode()).isEqualTo(400);
            assertThat(post(http, gateway, "k", "[1, 2]").statusCode()).isEqualTo(400);
            assertThat(post(http, gateway, null, body("r_1", "m_1", "1.00", "EUR")).statusCode()).isEqualTo(400);
            assertThat(gateway.ledger()).isEmpty();

            assertThat(post(http, gateway, "k", body("r".repeat(64), "m_1", 9999999999.99, "EUR")).statusCode()).isEqualTo(201);
            assertThat(gateway.ledger()).extracting(GatewayRefund::amount).containsExactly(new BigDecimal("9999999999.99"));
        }
    }

    /**
     * Amounts are checked against their currency's ISO 4217 minor units, as a payment provider does:
     * JPY 1.50 and KWD 1.2345 are refused with the reason and create nothing, never rounded; so are
     * currencies without minor units (XAU) and unknown codes. JPY 150 and KWD 1.234 are made, kept
     * with exactly their currency's decimals. The control: EUR 1.50, the same digits, is made.
     */
    @Test
    void anAmountWithMoreDecimalsThanItsCurrencyHasIsRefusedNotRounded() throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(fast().build())) {
            HttpClient http = http();
            for (String[] refused : new String[][] {{"1.50", "JPY"}, {"1.2345", "KWD"}, {"1.001", "EUR"}, {"1", "XAU"}, {"1", "ABC"},
                    {"1.0001", "CLF"}, {"99999999999", "JPY"}}) {
                HttpResponse<String> answer = post(http, gateway, "k-" + refused[1], body("r_" + refused[1], "m_1", refused[0], refused[1]));
                assertThat(answer.statusCode()).as("%s %s", refused[0], refused[1]).isEqualTo(400);
                assertThat(json(answer).path("error").asText()).as("the reason").contains(refused[1]);
            }
            assertThat(json(post(http, gateway, "k", body("r_1", "m_1", "1.50", "JPY"))).path("error").asText())
                    .isEqualTo("amount 1.50 JPY has more decimals than JPY has (0); it is refused, not rounded");
            assertThat(gateway.ledger()).as("nothing created").isEmpty();

            assertThat(post(http, gateway, "k-jpy", body("r_jpy", "m_1", "150", "JPY")).statusCode()).isEqualTo(201);
            assertThat(post(http, gateway, "k-kwd", body("r_kwd", "m_1", "1.234", "KWD")).statusCode()).isEqualTo(201);
            assertThat(post(http, gateway, "k-eur", body("r_eur", "m_1", "1.50", "EUR")).statusCode()).as("control").isEqualTo(201);
            assertThat(post(http, gateway, "k-jpy", body("r_jpy", "m_1", "150.000", "JPY")).statusCode()).as("the same refund, replayed")
                    .isEqualTo(200);
            assertThat(gateway.ledger()).extracting(r -> r.amount().toPlainString() + " " + r.currency())
                    .containsExactly("150 JPY", "1.234 KWD", "1.50 EUR");
        }
    }

    @Test
    void aRefundAboveTheLimitIsRefusedEveryTimeAndCreatesNothing() throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(fast().refuseAbove(new BigDecimal("100")).build())) {
            HttpClient http = http();
            for (int attempt = 0; attempt < 2; attempt++) {
                HttpResponse<String> refused = refund(http, gateway, "r_big", "100.01");
                assertThat(refused.statusCode()).isEqualTo(422);
                assertThat(json(refused).get("code").asText()).isEqualTo("refund_refused");
                assertThat(json(refused).get("error").asText()).isEqualTo("refund of 100.01 exceeds the limit of 100.00");
            }
            assertThat(gateway.ledger()).isEmpty();
            assertThat(refund(http, gateway, "r_ok", "100.00").statusCode()).isEqualTo(201);
        }
    }

    @Test
    void anInjectedFaultNeverHidesARefusal() throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(fast().refuseAbove(new BigDecimal("100.00")).failBefore(1.0).build())) {
            HttpClient http = http();
            assertThat(refund(http, gateway, "r_big", "100.01").statusCode()).isEqualTo(422);
            assertThat(refund(http, gateway, "r_ok", "100.00").statusCode()).isEqualTo(503);
        }
    }

    @Test
    void refundsAreFoundByIdempotencyKeyAndByMerchant() throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(fast().build())) {
            HttpClient http = http();
            post(http, gateway, "key-1", body("r_1", "m_a", "1.00", "EUR"));
            post(http, gateway, "key 2/&=?", body("r_2", "m_b", "2.00", "EUR"));
            post(http, gateway, "key-3", body("r_3", "m_a", "3.00", "EUR"));

            JsonNode byKey = json(get(http, gateway, "/refunds?idempotency_key=key-3"));
            assertThat(byKey.get("exists").asBoolean()).isTrue();
            assertThat(ids(byKey.get("refunds"))).containsExactly("gw_000003");
            String encoded = URLEncoder.encode("key 2/&=?", StandardCharsets.UTF_8);
            assertThat(ids(json(get(http, gateway, "/refunds?idempotency_key=" + encoded)).get("refunds"))).containsExactly("gw_000002");
            assertThat(json(get(http, gateway, "/refunds?idempotency_key=key-9")).get("exists").asBoolean()).isFalse();

            JsonNode byMerchant = json(get(http, gateway, "/refunds?merchant=m_a"));
            assertThat(ids(byMerchant.get("refunds"))).containsExactly("gw_000001", "gw_000003");
            JsonNode none = json(get(http, gateway, "/refunds?merchant=m_z"));
            assertThat(none.get("exists").asBoolean()).isFalse();
            assertThat(none.get("refunds")).isEmpty();

            assertThat(ids(json(get(http, gateway, "/refunds?reference=r_2")).get("refunds"))).containsExactly("gw_000002");
            assertThat(get(http, gateway, "/refunds").statusCode()).isEqualTo(400);
            assertThat(get(http, gateway, "/refunds?reference=r_1&merchant=m_a").statusCode()).isEqualTo(400);
            assertThat(get(http, gateway, "/refunds?colour=red").statusCode()).isEqualTo(400);
        }
    }

    @Test
    void aTornLastLineIsDroppedAndTheIdsContinue(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("ledger.jsonl");
        try (PaymentGateway gateway = PaymentGateway.start(fast().ledgerFile(file).build())) {
            HttpClient http = http();
            for (int i = 1; i <= 3; i++) {
                assertThat(refund(http, gateway, "r_" + i, "1.00").statusCode()).isEqualTo(201);
            }
        }
        String torn = "{\"id\":\"gw_000004\",\"idempotencyKey\":\"r_4\",\"refer";
        Files.writeString(file, torn, StandardOpenOption.APPEND);

        String warnings = capturingStandardError(() -> {
            try (PaymentGateway restarted = PaymentGateway.start(fast().ledgerFile(file).build())) {
                HttpClient http = http();
                assertThat(ids(json(get(http, restarted, "/ledger")).get("refunds")))
                        .containsExactly("gw_000001", "gw_000002", "gw_000003");
                assertThat(json(refund(http, restarted, "r_4", "4.00")).get("id").asText()).isEqualTo("gw_000004");
            }
        });
        assertThat(warnings).contains("dropped a torn last line", file.toString(), "(" + torn.length() + " bytes)");
        List<String> lines = Files.readAllLines(file);
        assertThat(lines).hasSize(4);
        for (String line : lines) {
            assertThat(JSON.readValue(line, GatewayRefund.class).amount()).isNotNull();
        }
    }

    @Test
    void aLastRecordWithoutItsNewlineIsKept(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("ledger.jsonl");
        try (PaymentGateway gateway = PaymentGateway.start(fast().ledgerFile(file).build())) {
            refund(http(), gateway, "r_1", "1.00");
        }
        Files.writeString(file, Files.readString(file).stripTrailing());
        try (PaymentGateway restarted = PaymentGateway.start(fast().ledgerFile(file).build())) {
            refund(http(), restarted, "r_2", "2.00");
            assertThat(restarted.ledger()).extracting(GatewayRefund::id).containsExactly("gw_000001", "gw_000002");
        }
        try (PaymentGateway again = PaymentGateway.start(fast().ledgerFile(file).build())) {
            assertThat(again.ledger()).hasSize(2);
        }
    }

    @Test
    void aCorruptLineBeforeTheLastRefusesToStart(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("ledger.jsonl");
        try (PaymentGateway gateway = PaymentGateway.start(fast().ledgerFile(file).build())) {
            for (int i = 1; i <= 3; i++) {
                refund(http(), gateway, "r_" + i, "1.00");
            }
        }
        List<String> lines = new ArrayList<>(Files.readAllLines(file));
        lines.set(1, lines.get(1).substring(0, 20));
        Files.write(file, lines);
        assertThatThrownBy(() -> PaymentGateway.start(fast().ledgerFile(file).build()))
                .isInstanceOfAny(IllegalStateException.class, UncheckedIOException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("line 2");
    }

    @Test
    void anOutageRefusesConnectionsThenTheSamePortAnswersWithTheSameLedger() throws Exception {
        ManualScheduler restarts = new ManualScheduler();
        try (PaymentGateway gateway = PaymentGateway.start(fast().build(), restarts)) {
            int port = gateway.port();
            assertThat(refund(http(), gateway, "r_1", "1.00").statusCode()).isEqualTo(201);

            gateway.outage(Duration.ofMillis(800));
            assertThat(gateway.listening()).isFalse();
            HttpClient http = http();
            assertThatThrownBy(() -> get(http, gateway, "/health")).isInstanceOf(ConnectException.class);

            restarts.advance(Duration.ofMillis(799));
            assertThat(gateway.listening()).as("down until the outage's end").isFalse();
            restarts.advance(Duration.ofMillis(1));
            assertThat(gateway.listening()).isTrue();
            assertThat(get(http, gateway, "/health").statusCode()).isEqualTo(200);
            assertThat(gateway.port()).isEqualTo(port);
            assertThat(ids(json(get(http, gateway, "/ledger")).get("refunds"))).containsExactly("gw_000001");
            assertThat(refund(http, gateway, "r_1", "1.00").statusCode()).isEqualTo(200);
            assertThat(refund(http, gateway, "r_2", "2.00").statusCode()).isEqualTo(201);
        }
    }

    @Test
    void aGatewayStartedDownListensLaterOnItsPort() throws Exception {
        ManualScheduler restarts = new ManualScheduler();
        try (PaymentGateway gateway = PaymentGateway.start(fast().downFor(Duration.ofMillis(600)).build(), restarts)) {
            assertThat(gateway.port()).isPositive();
            assertThat(gateway.listening()).isFalse();
            HttpClient http = http();
            assertThatThrownBy(() -> refund(http, gateway, "r_1", "1.00")).isInstanceOf(ConnectException.class);
            restarts.advance(Duration.ofMillis(600));
            assertThat(get(http, gateway, "/health").statusCode()).as("listening on its port after 600 ms").isEqualTo(200);
            assertThat(refund(http, gateway, "r_1", "1.00").statusCode()).isEqualTo(201);
        }
    }

    @Test
    void closingDuringAnOutageKeepsTheGatewayDown() throws Exception {
        ManualScheduler restarts = new ManualScheduler();
        PaymentGateway gateway = PaymentGateway.start(fast().build(), restarts);
        gateway.outage(Duration.ofMillis(200));
        gateway.close();
        restarts.advance(Duration.ofMillis(600)); // past the outage's end: a restart still due would run here
        assertThat(gateway.listening()).isFalse();
        assertThatThrownBy(() -> get(http(), gateway, "/health")).isInstanceOf(ConnectException.class);
        assertThatThrownBy(() -> gateway.outage(Duration.ofMillis(1))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void badSettingsAreRefusedWithTheirName() {
        assertThatThrownBy(() -> fast().refuseAbove(BigDecimal.ZERO).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("refuse-above");
        assertThatThrownBy(() -> fast().refuseAbove(new BigDecimal("-5")).build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> fast().refuseAbove(new BigDecimal("1.001")).build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> fast().refuseAbove(new BigDecimal("1e100000")).build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> fast().downFor(Duration.ofMillis(-1)).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("down-for");
        assertThat(fast().refuseAbove(new BigDecimal("100.000")).build().refuseAbove()).isEqualByComparingTo("100");
    }

    private interface Body {
        void run() throws Exception;
    }

    private static String capturingStandardError(Body body) throws Exception {
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            body.run();
        } finally {
            System.setErr(original);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }
}
