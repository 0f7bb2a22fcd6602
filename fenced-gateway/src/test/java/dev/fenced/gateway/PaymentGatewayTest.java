package dev.fenced.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.fenced.provider.GatewayException;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.testing.SettableClock;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PaymentGatewayTest {
    private static final BigDecimal AMOUNT = new BigDecimal("70.25");

    private static GatewayConfig.Builder fast() {
        return GatewayConfig.builder().latency(Duration.ZERO);
    }

    /** The client under test: the built-in HTTP/1.1 client here, the JDK's in {@link PaymentGatewayJdkClientTest}. */
    GatewayClient client(String url, Duration timeout) {
        return GatewayClient.of(url, timeout, true);
    }

    @Test
    void anAnswerWhoseBodyStallsEndsByTheCallsTimeoutInDoubt() throws Exception {
        // The head arrives, then a part of the body, and the rest never: the JDK's request timeout alone stops at the head.
        try (Http11ClientTest.ScriptedServer server = new Http11ClientTest.ScriptedServer((c, r, head, socket) -> {
            socket.getOutputStream().write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"id\""
                    .getBytes(StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
        })) {
            GatewayClient client = client("http://127.0.0.1:" + server.server.getLocalPort(), Duration.ofMillis(500));
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThatThrownBy(() -> client.createRefund("k_1", "r_1", "m_1", AMOUNT, "EUR"))
                    .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.UNKNOWN)),
                    "the call is bounded by its timeout");
        }
    }

    @Test
    void gatewayIdsAreSixDigitsAtLeastAsStringFormatWroteThem() {
        for (int number : new int[] {1, 42, 999_999, 1_000_000, 12_345_678}) {
            assertThat(Ledger.gatewayId(number)).isEqualTo(String.format("gw_%06d", number));
        }
    }

    @Test
    void theSameIdempotencyKeyReturnsTheSameRefund() {
        try (PaymentGateway gateway = PaymentGateway.start(fast().build())) {
            GatewayClient client = client(gateway.url(), Duration.ofSeconds(5));
            GatewayRefund first = client.createRefund("r_815", "r_815", "m_4471", AMOUNT, "EUR");
            GatewayRefund again = client.createRefund("r_815", "r_815", "m_4471", AMOUNT, "EUR");
            assertThat(again).isEqualTo(first);
            assertThat(gateway.ledger()).hasSize(1);
            assertThat(client.findByReference("r_815")).contains(first);
            assertThat(client.findByReference("r_816")).isEmpty();
            assertThat(client.ledger()).containsExactly(first);
        }
    }

    /**
     * The chaos run's key-expiry fault: with answers lost, a refund request is carried out and the
     * caller gets a 500 (unknown, not a refusal); with lookups down, every lookup fails with 503
     * while refund requests are served. Control: switched off, the same calls answer.
     */
    @Test
    void lostAnswersCreateTheRefundAndLookupsDownAnswerNothing() {
        try (PaymentGateway gateway = PaymentGateway.start(fast().build())) {
            GatewayClient client = client(gateway.url(), Duration.ofSeconds(5));
            gateway.loseAnswers(true);
            gateway.lookupsDown(true);
            assertThatThrownBy(() -> client.createRefund("k_815", "r_815", "m_4471", AMOUNT, "EUR"))
                    .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.UNKNOWN));
            assertThat(gateway.ledger()).extracting(GatewayRefund::reference).containsExactly("r_815");
            assertThat(gateway.answersLost()).containsExactly(gateway.ledger().get(0).id());
            assertThatThrownBy(() -> client.findByKey("k_815")).isInstanceOf(GatewayException.class).hasMessageContaining("503");
            assertThatThrownBy(() -> client.findByReference("m_4471", "r_815")).isInstanceOf(GatewayException.class);

            gateway.loseAnswers(false);
            GatewayRefund other = client.createRefund("k_816", "r_816", "m_4471", AMOUNT, "EUR"); // served while lookups are down
            assertThat(other.reference()).isEqualTo("r_816");
            gateway.lookupsDown(false);
            assertThat(client.findByKey("k_815")).map(GatewayRefund::reference).contains("r_815");
            assertThat(client.createRefund("k_815", "r_815", "m_4471", AMOUNT, "EUR")).isEqualTo(gateway.ledger().get(0));
            assertThat(gateway.ledger()).hasSize(2);
            assertThat(gateway.answersLost()).hasSize(1);
        }
    }

    /**
     * Stripe prunes a key 24 hours after its first use, and a request that reuses it afterwards
     * makes a new refund: so does the simulator, by its own clock, here moved rather than waited
     * for. The refund itself stays findable by reference, also after a restart (the key's age comes
     * from the refund's creation time in the ledger). Control: a moment before the retention ends,
     * the same request is a replay.
     */
    @Test
    void aKeyIsForgottenAfterItsRetentionAndAReusedKeyMakesASecondRefund(@TempDir Path dir) {
        SettableClock clock = new SettableClock();
        Path file = dir.resolve("ledger.jsonl");
        GatewayConfig config = fast().clock(clock).ledgerFile(file).build();
        assertThat(config.keyRetention()).isEqualTo(Duration.ofHours(24));
        GatewayRefund first;
        try (PaymentGateway gateway = PaymentGateway.start(config)) {
            GatewayClient client = client(gateway.url(), Duration.ofSeconds(5));
            first = client.createRefund("k_815", "r_815", "m_4471", AMOUNT, "EUR");
            clock.advance(Duration.ofHours(24).minusMillis(1));
            assertThat(client.findByKey("k_815")).contains(first);
            assertThat(client.createRefund("k_815", "r_815", "m_4471", AMOUNT, "EUR")).isEqualTo(first);
        }
        clock.advance(Duration.ofMillis(1));
        try (PaymentGateway restarted = PaymentGateway.start(config)) {
            GatewayClient client = client(restarted.url(), Duration.ofSeconds(5));
            assertThat(client.findByKey("k_815")).isEmpty();
            assertThat(client.findByReference("m_4471", "r_815")).containsExactly(first);
            GatewayRefund second = client.createRefund("k_815", "r_815", "m_4471", AMOUNT, "EUR");
            assertThat(second.id()).isNotEqualTo(first.id());
            assertThat(client.findByKey("k_815")).contains(second);
            assertThat(client.findByReference("m_4471", "r_815")).containsExactly(first, second);
            assertThat(client.findByReference("m_9999", "r_815")).isEmpty();
            assertThat(client.createRefund("k_815", "r_815", "m_4471", AMOUNT, "EUR")).isEqualTo(second);
        }
    }

    @Test
    void theKeyRetentionMustBePositive() {
        assertThatThrownBy(() -> fast().keyRetention(Duration.ZERO).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key-retention");
        assertThatThrownBy(() -> fast().keyRetention(Duration.ofSeconds(-1)).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key-retention");
    }

    @Test
    void theSameKeyWithAnotherAmountIsRejected() {
        try (PaymentGateway gateway = PaymentGateway.start(fast().build())) {
            GatewayClient client = client(gateway.url(), Duration.ofSeconds(5));
            client.createRefund("r_815", "r_815", "m_4471", AMOUNT, "EUR");
            assertThatThrownBy(() -> client.createRefund("r_815", "r_815", "m_4471", new BigDecimal("70.26"), "EUR"))
                    .isInstanceOfSatisfying(GatewayException.class, e -> {
                        assertThat(e.status()).isEqualTo(409);
                        assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.REJECTED);
                        assertThat(e.retryable()).isFalse();
                    });
            assertThat(gateway.ledger()).hasSize(1);
        }
    }

    @Test
    void withoutIdempotencyEveryPostCreatesARefund() {
        try (PaymentGateway gateway = PaymentGateway.start(fast().idempotency(false).build())) {
            GatewayClient client = client(gateway.url(), Duration.ofSeconds(5));
            GatewayRefund first = client.createRefund("r_815", "r_815", "m_4471", AMOUNT, "EUR");
            GatewayRefund second = client.createRefund("r_815", "r_815", "m_4471", AMOUNT, "EUR");
            assertThat(second.id()).isNotEqualTo(first.id());
            assertThat(gateway.ledger()).hasSize(2);
        }
    }

    @Test
    void theLedgerSurvivesARestart(@TempDir Path dir) {
        Path file = dir.resolve("ledger.jsonl");
        GatewayRefund created;
        try (PaymentGateway gateway = PaymentGateway.start(fast().ledgerFile(file).build())) {
            created = client(gateway.url(), Duration.ofSeconds(5)).createRefund("r_1", "r_1", "m_1", AMOUNT, "EUR");
        }
        try (PaymentGateway restarted = PaymentGateway.start(fast().ledgerFile(file).build())) {
            GatewayClient client = client(restarted.url(), Duration.ofSeconds(5));
            assertThat(client.ledger()).containsExactly(created);
            assertThat(client.createRefund("r_1", "r_1", "m_1", AMOUNT, "EUR")).isEqualTo(created);
            assertThat(client.createRefund("r_2", "r_2", "m_1", AMOUNT, "EUR").id()).isNotEqualTo(created.id());
        }
    }

    /**
     * Metadata is kept with the refund, returned by every lookup and by a replay (the first
     * request's, since it is not compared), and survives a restart; a ledger line written before
     * refunds had metadata reads as a refund without it. Control: the same refund made without
     * metadata has none.
     */
    @Test
    void metadataIsKeptWithTheRefundAndReturnedByEveryLookup(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("ledger.jsonl");
        Files.writeString(file, "{\"id\":\"gw_000001\",\"idempotencyKey\":\"k_0\",\"reference\":\"r_0\","
                + "\"merchant\":\"m_1\",\"amount\":1.00,\"currency\":\"EUR\",\"createdAt\":1}\n");
        Map<String, String> owner = Map.of("deployment", "d_1", "refund", "r_1");
        GatewayRefund created;
        try (PaymentGateway gateway = PaymentGateway.start(fast().ledgerFile(file).build())) {
            GatewayClient client = client(gateway.url(), Duration.ofSeconds(5));
            created = client.createRefund("k_1", "r_1", "m_1", AMOUNT, "EUR", owner);
            assertThat(created.metadata()).isEqualTo(owner);
            assertThat(client.createRefund("k_1", "r_1", "m_1", AMOUNT, "EUR", Map.of("deployment", "d_2")))
                    .as("a replay returns the first request's metadata").isEqualTo(created);
            assertThat(client.findByKey("k_1")).contains(created);
            assertThat(client.createRefund("k_2", "r_2", "m_1", AMOUNT, "EUR").metadata()).as("control: none sent, none kept").isEmpty();
        }
        try (PaymentGateway restarted = PaymentGateway.start(fast().ledgerFile(file).build())) {
            GatewayClient client = client(restarted.url(), Duration.ofSeconds(5));
            assertThat(client.refundsOf("m_1")).extracting(GatewayRefund::metadata)
                    .containsExactly(Map.of(), owner, Map.of());
            assertThat(client.findByKey("k_1")).contains(created);
            HttpClient http = HttpClient.newHttpClient();
            for (String metadata : new String[] {"[1]", "{\"deployment\": 1}", "{\"\": \"x\"}", "{\"k\": \"" + "v".repeat(65) + "\"}"}) {
                HttpResponse<String> refused = http.send(HttpRequest.newBuilder(URI.create(restarted.url() + "/refunds"))
                        .header("Idempotency-Key", "k_bad").POST(HttpRequest.BodyPublishers.ofString("{\"reference\": \"r_9\", "
                                + "\"merchant\": \"m_1\", \"amount\": \"1.00\", \"currency\": \"EUR\", \"metadata\": " + metadata + "}"))
                        .build(), HttpResponse.BodyHandlers.ofString());
                assertThat(refused.statusCode()).as(metadata + ": " + refused.body()).isEqualTo(400);
            }
            assertThat(client.ledger()).hasSize(3);
        }
    }

    @Test
    void aFaultAfterCreatingLeavesTheRefundAndARetryWithTheSameKeyFindsIt() {
        try (PaymentGateway gateway = PaymentGateway.start(fast().failAfter(1.0).build())) {
            GatewayClient client = client(gateway.url(), Duration.ofSeconds(5));
            assertThatThrownBy(() -> client.createRefund("r_1", "r_1", "m_1", AMOUNT, "EUR"))
                    .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.UNKNOWN));
            assertThat(gateway.ledger()).hasSize(1);
            assertThat(client.findByReference("r_1")).isPresent();
            assertThat(client.findByKey("r_1")).isPresent();
            assertThat(client.findByKey("r_2")).isEmpty();
            assertThat(client.refundsOf("m_1")).hasSize(1);
            assertThat(client.refundsOf("m_2")).isEmpty();
        }
    }

    @Test
    void aFaultBeforeCreatingLeavesNothing() {
        try (PaymentGateway gateway = PaymentGateway.start(fast().failBefore(1.0).build())) {
            GatewayClient client = client(gateway.url(), Duration.ofSeconds(5));
            assertThatThrownBy(() -> client.createRefund("r_1", "r_1", "m_1", AMOUNT, "EUR"))
                    .isInstanceOfSatisfying(GatewayException.class, e -> {
                        assertThat(e.status()).isEqualTo(503);
                        assertThat(e.outcome()).as("a 5xx may have been processed").isEqualTo(GatewayException.Outcome.UNKNOWN);
                    });
            assertThat(gateway.ledger()).isEmpty();
        }
    }

    @Test
    void aSlowAnswerTimesTheClientOutButTheRefundExists() {
        try (PaymentGateway gateway = PaymentGateway.start(fast().slow(1.0, Duration.ofSeconds(2)).build())) {
            GatewayClient client = client(gateway.url(), Duration.ofMillis(300));
            assertThatThrownBy(() -> client.createRefund("r_1", "r_1", "m_1", AMOUNT, "EUR"))
                    .isInstanceOfSatisfying(GatewayException.class, e -> {
                        assertThat(e.status()).isZero();
                        assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.UNKNOWN);
                    });
            assertThat(gateway.ledger()).hasSize(1);
        }
    }

    /** Nothing listens: the request never left, so nothing can have been made; the message names no credentials. */
    @Test
    void aRefusedConnectionIsUnavailableAndItsMessageCarriesNoCredentials() {
        int port;
        try (PaymentGateway gateway = PaymentGateway.start(fast().build())) {
            port = gateway.port();
        }
        GatewayClient client = client("http://operator:s3cret%40pw@127.0.0.1:" + port, Duration.ofSeconds(2));
        assertThatThrownBy(() -> client.createRefund("k", "r_1", "m_1", AMOUNT, "EUR"))
                .isInstanceOfSatisfying(GatewayException.class, e -> {
                    assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.UNAVAILABLE);
                    assertThat(e.getMessage()).contains("127.0.0.1:" + port).doesNotContain("s3cret").doesNotContain("operator");
                });
        assertThat(client.toString()).doesNotContain("s3cret");
    }

    /** A definitive business refusal is the only answer classed as rejected on a create. */
    @Test
    void aRefusalIsRejectedAndCreatesNothing() {
        try (PaymentGateway gateway = PaymentGateway.start(fast().refuseAbove(new BigDecimal("50.00")).build())) {
            GatewayClient client = client(gateway.url(), Duration.ofSeconds(5));
            assertThatThrownBy(() -> client.createRefund("k1", "r_1", "m_1", AMOUNT, "EUR"))
                    .isInstanceOfSatisfying(GatewayException.class, e -> {
                        assertThat(e.status()).isEqualTo(422);
                        assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.REJECTED);
                        assertThat(e.getMessage()).contains("exceeds");
                    });
            assertThat(gateway.ledger()).isEmpty();
        }
    }

    @Test
    void statusCodesAreClassifiedInOnePlace() {
        assertThat(GatewayException.classify(400)).isEqualTo(GatewayException.Outcome.REJECTED);
        assertThat(GatewayException.classify(409)).isEqualTo(GatewayException.Outcome.REJECTED);
        assertThat(GatewayException.classify(422)).isEqualTo(GatewayException.Outcome.REJECTED);
        assertThat(GatewayException.classify(401)).as("a wrong credential is no verdict on the refund").isEqualTo(GatewayException.Outcome.UNAVAILABLE);
        assertThat(GatewayException.classify(429)).isEqualTo(GatewayException.Outcome.UNAVAILABLE);
        assertThat(GatewayException.classify(408)).isEqualTo(GatewayException.Outcome.UNKNOWN);
        assertThat(GatewayException.classify(500)).isEqualTo(GatewayException.Outcome.UNKNOWN);
        assertThat(GatewayException.classify(504)).isEqualTo(GatewayException.Outcome.UNKNOWN);
    }

    @Test
    void badRequestsAreRefusedAndCreateNothing() throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(fast().build())) {
            HttpClient http = HttpClient.newHttpClient();
            for (String body : new String[] {"not json", "{}", "{\"reference\":\"r\",\"merchant\":\"m\",\"amount\":\"1.005\",\"currency\":\"EUR\"}",
                    "{\"reference\":\"r\",\"merchant\":\"m\",\"amount\":\"-1\",\"currency\":\"EUR\"}",
                    "{\"reference\":\"r\",\"merchant\":\"m\",\"amount\":\"1\",\"currency\":\"euro\"}"}) {
                HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(gateway.url() + "/refunds"))
                        .header("Idempotency-Key", "k").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).as(body).isEqualTo(400);
            }
            HttpResponse<String> noKey = http.send(HttpRequest.newBuilder(URI.create(gateway.url() + "/refunds"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"reference\":\"r\",\"merchant\":\"m\",\"amount\":\"1\",\"currency\":\"EUR\"}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(noKey.statusCode()).isEqualTo(400);
            assertThat(noKey.body()).contains("Idempotency-Key");
            assertThat(gateway.ledger()).isEmpty();
        }
        assertThatThrownBy(() -> GatewayClient.of("ftp://x", Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> GatewayClient.of("not a url", Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> GatewayClient.of("http://127.0.0.1:70000", Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("port");
        String before = System.getProperty(GatewayClient.HTTP_CLIENT_PROPERTY);
        System.setProperty(GatewayClient.HTTP_CLIENT_PROPERTY, "curl");
        try {
            assertThatThrownBy(() -> GatewayClient.of("http://127.0.0.1:1", Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("builtin or jdk");
        } finally {
            if (before == null) {
                System.clearProperty(GatewayClient.HTTP_CLIENT_PROPERTY);
            } else {
                System.setProperty(GatewayClient.HTTP_CLIENT_PROPERTY, before);
            }
        }
    }

    /**
     * With an API key, a request without it or with another is refused 401, nothing made, the
     * answer never repeating what was sent, and the client reports it as refused credentials
     * (unavailable: nothing was processed). Control: the key as the URL's user is let in.
     */
    @Test
    void aWrongApiKeyIsRefusedWithoutEchoAndTheRightOneIsLetIn() {
        try (PaymentGateway gateway = PaymentGateway.start(fast().apiKey("sk_test_right").build())) {
            for (String url : List.of(gateway.url(), gateway.url().replace("http://", "http://sk_test_wrong@"))) {
                GatewayClient client = client(url, Duration.ofSeconds(5));
                assertThatThrownBy(() -> client.createRefund("k_1", "r_1", "m_1", AMOUNT, "EUR"))
                        .isInstanceOfSatisfying(GatewayException.class, e -> {
                            assertThat(e.status()).isEqualTo(401);
                            assertThat(e.credentialsRefused()).isTrue();
                            assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.UNAVAILABLE);
                            assertThat(e.getMessage()).doesNotContain("sk_test");
                        });
            }
            assertThat(gateway.ledger()).isEmpty();
            GatewayClient right = client(gateway.url().replace("http://", "http://sk_test_right:@"), Duration.ofSeconds(5));
            assertThat(right.createRefund("k_1", "r_1", "m_1", AMOUNT, "EUR").reference()).isEqualTo("r_1");
        }
    }

    /** A rate-limited request is answered 429 with Retry-After in whole seconds, nothing made; the client reads the wait. */
    @Test
    void aRateLimitedRequestCarriesItsRetryAfterAndMakesNothing() {
        try (PaymentGateway gateway = PaymentGateway.start(fast().rateLimited(1.0, Duration.ofMillis(1500)).build())) {
            GatewayClient client = client(gateway.url(), Duration.ofSeconds(5));
            assertThatThrownBy(() -> client.createRefund("k_1", "r_1", "m_1", AMOUNT, "EUR"))
                    .isInstanceOfSatisfying(GatewayException.class, e -> {
                        assertThat(e.status()).isEqualTo(429);
                        assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.UNAVAILABLE);
                        assertThat(e.retryAfter()).contains(Duration.ofSeconds(2));
                        assertThat(e.credentialsRefused()).isFalse();
                    });
            assertThat(gateway.ledger()).isEmpty();
            gateway.faultsEnabled(false);
            assertThat(client.createRefund("k_1", "r_1", "m_1", AMOUNT, "EUR").reference()).as("faults off: let in").isEqualTo("r_1");
        }
    }

    /**
     * Refunds are pending for the configured time after they are made, then final: succeeded, or
     * failed with a reason for the configured share, the same answer on every lookup and after a
     * restart (drawn from the refund's id). Read one by id. Control: without a lifecycle every
     * refund is succeeded at once.
     */
    @Test
    void refundsArePendingThenFinalAndEveryLookupTellsTheSameStory(@TempDir Path dir) {
        SettableClock clock = new SettableClock();
        GatewayConfig config = fast().clock(clock).ledgerFile(dir.resolve("ledger.jsonl")).lifecycle(Duration.ofHours(1), 0.5).seed(3).build();
        List<GatewayRefund> made = new java.util.ArrayList<>();
        try (PaymentGateway gateway = PaymentGateway.start(config)) {
            GatewayClient client = client(gateway.url(), Duration.ofSeconds(5));
            for (int i = 1; i <= 20; i++) {
                made.add(client.createRefund("k_" + i, "r_" + i, "m_1", AMOUNT, "EUR"));
            }
            assertThat(made).extracting(GatewayRefund::status).containsOnly(GatewayRefund.PENDING);
            clock.advance(Duration.ofHours(1));
            assertThat(client.refundById("m_1", made.get(0).id())).get().extracting(GatewayRefund::status)
                    .isIn(GatewayRefund.SUCCEEDED, GatewayRefund.FAILED);
        }
        try (PaymentGateway restarted = PaymentGateway.start(config)) {
            GatewayClient client = client(restarted.url(), Duration.ofSeconds(5));
            List<GatewayRefund> now = client.refundsOf("m_1");
            assertThat(now).extracting(GatewayRefund::status).contains(GatewayRefund.SUCCEEDED, GatewayRefund.FAILED)
                    .doesNotContain(GatewayRefund.PENDING);
            assertThat(now).filteredOn(r -> r.status().equals(GatewayRefund.FAILED)).extracting(GatewayRefund::failureReason)
                    .containsOnly("expired_or_canceled_card");
            assertThat(restarted.ledger()).as("the same story from the ledger").isEqualTo(now);
            assertThat(client.refundById("m_1", made.get(3).id())).contains(now.get(3));
            assertThat(client.refundById("m_2", made.get(3).id())).as("another merchant's id").isEmpty();
        }
        try (PaymentGateway plain = PaymentGateway.start(fast().build())) {
            assertThat(client(plain.url(), Duration.ofSeconds(5)).createRefund("k_1", "r_1", "m_1", AMOUNT, "EUR").status())
                    .as("control: final at once").isEqualTo(GatewayRefund.SUCCEEDED);
        }
    }
}
