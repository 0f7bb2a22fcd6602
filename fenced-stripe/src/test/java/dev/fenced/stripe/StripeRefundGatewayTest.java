package dev.fenced.stripe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.stripe.StripeClient;
import com.stripe.exception.StripeException;
import com.stripe.model.PaymentIntent;
import com.stripe.model.Refund;
import com.stripe.param.ChargeCreateParams;
import com.stripe.param.PaymentIntentCreateParams;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.provider.GatewayException;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.testing.SettableClock;
import java.math.BigDecimal;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The adapter through Stripe's official library against the simulated gateway's Stripe-shaped
 * surface over real HTTP: refunds against a charge under the row's key, lookups by the charge's
 * refunds, and Stripe's errors classified by what they mean for the money.
 */
class StripeRefundGatewayTest {
    static final String API_KEY = "sk_test_fenced_4471";

    /** A captured charge of {@code amount} EUR for {@code merchant}, made through the official library. */
    static String charge(PaymentGateway gateway, String merchant, String amount) throws StripeException {
        return charge(gateway, merchant, amount, "tok_visa");
    }

    /** The same, paid with Stripe's test {@code source} (e.g. {@code tok_refundFail}, whose refunds fail after they succeed). */
    static String charge(PaymentGateway gateway, String merchant, String amount, String source) throws StripeException {
        StripeClient client = StripeClient.builder().setApiKey(API_KEY).setApiBase(gateway.url()).setMaxNetworkRetries(0).build();
        return client.charges().create(ChargeCreateParams.builder().setAmount(new BigDecimal(amount).movePointRight(2).longValueExact())
                .setCurrency("eur").setSource(source).putMetadata("merchant", merchant).build()).getId();
    }

    static StripeRefundGateway adapter(PaymentGateway gateway, ChargeResolver charges) {
        return StripeRefundGateway.builder().apiKey(API_KEY).apiBase(URI.create(gateway.url())).charges(charges)
                .timeout(Duration.ofSeconds(5)).build();
    }

    @Test
    void aRefundIsMadeOnceUnderItsKeyAndFoundByTheChargesRefunds() throws Exception {
        SettableClock clock = new SettableClock(Instant.now());
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).apiKey(API_KEY).clock(clock).build())) {
            String charge = charge(gateway, "m_4471", "100.00");
            StripeRefundGateway stripe = adapter(gateway, (merchant, reference) -> charge);
            GatewayRefund made = stripe.createRefund("k_815", "r_815", "m_4471", new BigDecimal("70.25"), "EUR", Map.of("owner", "d_1"));
            assertThat(made.amount()).isEqualByComparingTo("70.25");
            assertThat(made.currency()).isEqualTo("EUR");
            assertThat(made.reference()).isEqualTo("r_815");
            assertThat(made.merchant()).isEqualTo("m_4471");
            assertThat(made.idempotencyKey()).isEqualTo("k_815");
            assertThat(made.metadata()).containsEntry("owner", "d_1");
            assertThat(made.status()).isEqualTo(GatewayRefund.SUCCEEDED);

            assertThat(stripe.createRefund("k_815", "r_815", "m_4471", new BigDecimal("70.25"), "EUR", Map.of("owner", "d_1")).id())
                    .as("a replay under the key").isEqualTo(made.id());
            assertThat(gateway.ledger()).hasSize(1);
            assertThatThrownBy(() -> stripe.createRefund("k_815", "r_815", "m_4471", new BigDecimal("70.26"), "EUR", Map.of("owner", "d_1")))
                    .as("a key used before: a refund under it exists, so in doubt, never refused").isInstanceOfSatisfying(GatewayException.class, e -> {
                        assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.UNKNOWN);
                        assertThat(e.getMessage()).contains("IdempotencyException").doesNotContain(API_KEY);
                    });

            assertThatThrownBy(() -> stripe.findByKey("k_815")).as("no lookup by key alone at Stripe: unknown, never absent")
                    .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.UNKNOWN));
            assertThat(stripe.findByKey("m_4471", "r_815", "k_815")).contains(made);
            assertThat(stripe.findByKey("m_4471", "r_815", "k_other")).isEmpty();
            assertThat(stripe.findByReference("m_4471", "r_815")).containsExactly(made);
            assertThat(stripe.refundById("m_4471", made.id())).contains(made);
            assertThat(stripe.refundById("m_9999", made.id())).as("another merchant's").isEmpty();
            assertThat(stripe.refundById("m_4471", "gw_999999")).isEmpty();
            assertThat(stripe.refundsOf("m_4471")).containsExactly(made);

            clock.advance(Duration.ofHours(25));
            assertThat(stripe.findByKey("m_4471", "r_815", "k_815")).as("found by its metadata after Stripe forgot the key").contains(made);
            assertThatThrownBy(() -> stripe.createRefund("k_815", "r_815", "m_4471", new BigDecimal("70.25"), "EUR", Map.of("owner", "d_1")))
                    .as("control: the key is forgotten, the same request is a new refund, beyond what the charge has left")
                    .hasMessageContaining("amount_too_large");
        }
    }

    /**
     * A refund against a payment intent, Stripe's way of taking payments today: made once under its
     * key, its object naming the intent and its charge, found by listing the intent's refunds.
     * Control: another intent's refunds do not hold it, and the intent's charge refuses what it
     * has no more of.
     */
    @Test
    void aRefundAgainstAPaymentIntentIsMadeOnceAndFoundByTheIntentsRefunds() throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).apiKey(API_KEY).build())) {
            StripeClient client = StripeClient.builder().setApiKey(API_KEY).setApiBase(gateway.url()).setMaxNetworkRetries(0).build();
            PaymentIntent paid = client.paymentIntents().create(PaymentIntentCreateParams.builder().setAmount(10000L).setCurrency("eur")
                    .setPaymentMethod("pm_card_visa").setConfirm(true).putMetadata("merchant", "m_4471").build());
            PaymentIntent other = client.paymentIntents().create(PaymentIntentCreateParams.builder().setAmount(500L).setCurrency("eur")
                    .setPaymentMethod("pm_card_visa").setConfirm(true).putMetadata("merchant", "m_4471").build());
            assertThat(paid.getId()).startsWith("pi_");
            assertThat(paid.getStatus()).isEqualTo("succeeded");
            StripeRefundGateway stripe = adapter(gateway, (merchant, reference) -> reference.equals("r_815") ? paid.getId() : other.getId());

            GatewayRefund made = stripe.createRefund("k_815", "r_815", "m_4471", new BigDecimal("70.25"), "EUR");
            assertThat(stripe.createRefund("k_815", "r_815", "m_4471", new BigDecimal("70.25"), "EUR").id()).isEqualTo(made.id());
            Refund object = client.refunds().retrieve(made.id());
            assertThat(object.getPaymentIntent()).isEqualTo(paid.getId());
            assertThat(object.getCharge()).isEqualTo(paid.getLatestCharge());
            assertThat(stripe.findByKey("m_4471", "r_815", "k_815")).contains(made);
            assertThat(stripe.findByKey("m_4471", "r_816", "k_815")).as("control: another intent's refunds").isEmpty();
            assertThatThrownBy(() -> stripe.createRefund("k_816", "r_815", "m_4471", new BigDecimal("29.76"), "EUR"))
                    .as("control: beyond what the intent's charge has left").hasMessageContaining("amount_too_large");
            assertThat(gateway.ledger()).hasSize(1);
        }
    }

    /**
     * A charge is never refunded beyond what it captured: the refund that would exceed it is a
     * definitive refusal and makes nothing. Control: the same charge takes the refund that fits.
     */
    @Test
    void aChargeIsNeverRefundedBeyondWhatItCaptured() throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            String charge = charge(gateway, "m_1", "100.00");
            StripeRefundGateway stripe = adapter(gateway, (merchant, reference) -> charge);
            stripe.createRefund("k_1", "r_1", "m_1", new BigDecimal("70.25"), "EUR");
            assertThatThrownBy(() -> stripe.createRefund("k_2", "r_2", "m_1", new BigDecimal("40.00"), "EUR"))
                    .isInstanceOfSatisfying(GatewayException.class, e -> {
                        assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.REJECTED);
                        assertThat(e.getMessage()).contains("amount_too_large");
                    });
            assertThat(gateway.ledger()).as("nothing made").hasSize(1);
            assertThat(stripe.createRefund("k_3", "r_3", "m_1", new BigDecimal("29.75"), "EUR").amount()).as("control: what fits")
                    .isEqualByComparingTo("29.75");
            assertThatThrownBy(() -> stripe.createRefund("k_4", "r_4", "m_1", new BigDecimal("0.01"), "EUR"))
                    .hasMessageContaining("charge_already_refunded");
            assertThatThrownBy(() -> adapter(gateway, (merchant, reference) -> "ch_none").createRefund("k_5", "r_5", "m_1", BigDecimal.ONE, "EUR"))
                    .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.REJECTED));
        }
    }

    /**
     * Amounts in Stripe's units, not ISO's: MGA has no decimals at Stripe, ISK two, KWD three ending
     * in 0; an amount that does not fit is refused before anything is sent.
     */
    @Test
    void amountsGoInStripesUnits() throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            StripeClient client = StripeClient.builder().setApiKey(API_KEY).setApiBase(gateway.url()).setMaxNetworkRetries(0).build();
            Map<String, String> charges = new java.util.HashMap<>();
            for (String[] c : new String[][] {{"MGA", "100000"}, {"ISK", "1000000"}, {"KWD", "100000"}}) {
                charges.put(c[0], client.charges().create(ChargeCreateParams.builder().setAmount(Long.parseLong(c[1]))
                        .setCurrency(c[0].toLowerCase(java.util.Locale.ROOT)).putMetadata("merchant", "m_1").build()).getId());
            }
            StripeRefundGateway stripe = adapter(gateway, (merchant, reference) -> charges.get(reference.substring(2)));
            GatewayRefund mga = stripe.createRefund("k_1", "r_MGA", "m_1", new BigDecimal("150"), "MGA");
            assertThat(client.refunds().retrieve(mga.id()).getAmount()).as("150 MGA, not 15000").isEqualTo(150L);
            assertThat(mga.amount()).isEqualByComparingTo("150");
            GatewayRefund isk = stripe.createRefund("k_2", "r_ISK", "m_1", new BigDecimal("1000"), "ISK");
            assertThat(client.refunds().retrieve(isk.id()).getAmount()).as("1000 ISK, times 100").isEqualTo(100000L);
            assertThat(isk.amount()).isEqualByComparingTo("1000");
            GatewayRefund kwd = stripe.createRefund("k_3", "r_KWD", "m_1", new BigDecimal("1.230"), "KWD");
            assertThat(client.refunds().retrieve(kwd.id()).getAmount()).isEqualTo(1230L);
            assertThatThrownBy(() -> stripe.createRefund("k_4", "r_KWD", "m_1", new BigDecimal("1.234"), "KWD"))
                    .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.REJECTED))
                    .hasMessageContaining("must end in 0");
            assertThat(gateway.ledger()).as("nothing sent for the amount that does not fit").hasSize(3);
        }
    }

    /** Ten refunds at once against a charge that can take five: five are made, the charge never goes beyond what it captured. */
    @Test
    void concurrentRefundsNeverTakeAChargeBeyondWhatItCaptured() throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(5)).build())) {
            String charge = charge(gateway, "m_1", "100.00");
            StripeRefundGateway stripe = adapter(gateway, (merchant, reference) -> charge);
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(10);
            try {
                java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(10);
                List<java.util.concurrent.Future<Boolean>> made = new java.util.ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    int n = i;
                    made.add(pool.submit(() -> {
                        together.await();
                        try {
                            stripe.createRefund("k_" + n, "r_" + n, "m_1", new BigDecimal("20.00"), "EUR");
                            return true;
                        } catch (GatewayException e) {
                            assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.REJECTED);
                            return false;
                        }
                    }));
                }
                long succeeded = 0;
                for (java.util.concurrent.Future<Boolean> each : made) {
                    succeeded += each.get() ? 1 : 0;
                }
                assertThat(succeeded).isEqualTo(5);
            } finally {
                pool.shutdownNow();
            }
            assertThat(gateway.ledger().stream().map(GatewayRefund::amount).reduce(BigDecimal.ZERO, BigDecimal::add)).isEqualByComparingTo("100.00");
        }
    }

    /** The classification of answers no simulator run gives: a key in use, a 400 about the request rather than the refund, an unreadable 200. */
    @Test
    void answersThatSayNothingOfTheRefundAreNeverRefusals() {
        assertThat(StripeRefundGateway.classify("x", new com.stripe.exception.ApiException("key in use", "req_1", "idempotency_key_in_use", 409, null))
                .outcome()).isEqualTo(GatewayException.Outcome.UNKNOWN);
        assertThat(StripeRefundGateway.classify("x", new com.stripe.exception.IdempotencyException("other parameters", "req_1", null, 400))
                .outcome()).isEqualTo(GatewayException.Outcome.UNKNOWN);
        assertThat(StripeRefundGateway.classify("x", new com.stripe.exception.InvalidRequestException("Received unknown parameter", "foo",
                "req_1", "parameter_unknown", 400, null)).outcome()).as("a configuration problem, not this refund's").isEqualTo(GatewayException.Outcome.UNAVAILABLE);
        assertThat(StripeRefundGateway.classify("x", new com.stripe.exception.ApiException("Invalid response object", "req_1", null, 200, null))
                .outcome()).as("an answer the library could not read: the refund may exist").isEqualTo(GatewayException.Outcome.UNKNOWN);
        assertThat(StripeRefundGateway.classify("x", new com.stripe.exception.InvalidRequestException("too large", "amount", "req_1",
                "amount_too_large", 400, null)).outcome()).as("control: a refusal of this refund").isEqualTo(GatewayException.Outcome.REJECTED);
    }

    /** Stripe's other errors, each by what it means for the money; the key never shows. */
    @Test
    void refusedKeysRateLimitsAndLostConnectionsAreClassifiedByWhatTheyMeanForTheMoney() throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).apiKey(API_KEY)
                .rateLimited(1.0, Duration.ofSeconds(2)).build())) {
            String charge = charge(gateway, "m_1", "10.00");
            StripeRefundGateway wrongKey = StripeRefundGateway.builder().apiKey("sk_test_wrong_key").apiBase(URI.create(gateway.url()))
                    .charges((merchant, reference) -> charge).build();
            assertThatThrownBy(() -> wrongKey.createRefund("k_1", "r_1", "m_1", BigDecimal.ONE, "EUR"))
                    .isInstanceOfSatisfying(GatewayException.class, e -> {
                        assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.UNAVAILABLE);
                        assertThat(e.credentialsRefused()).isTrue();
                        assertThat(e.getMessage()).doesNotContain("sk_test_wrong_key");
                    });
            assertThatThrownBy(() -> adapter(gateway, (merchant, reference) -> charge).createRefund("k_1", "r_1", "m_1", BigDecimal.ONE, "EUR"))
                    .isInstanceOfSatisfying(GatewayException.class, e -> {
                        assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.UNAVAILABLE);
                        assertThat(e.retryAfter()).contains(Duration.ofSeconds(2));
                    });
            assertThat(gateway.ledger()).isEmpty();
        }
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        StripeRefundGateway nowhere = StripeRefundGateway.builder().apiKey(API_KEY).apiBase(URI.create("http://127.0.0.1:" + closed))
                .charges((merchant, reference) -> "ch_1").timeout(Duration.ofSeconds(1)).build();
        assertThatThrownBy(() -> nowhere.createRefund("k_1", "r_1", "m_1", BigDecimal.ONE, "EUR"))
                .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.outcome()).as("may have been sent: looked up, never refused")
                        .isEqualTo(GatewayException.Outcome.UNKNOWN));
        assertThatThrownBy(() -> StripeRefundGateway.builder().apiKey("sk test").charges((m, r) -> "ch").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageNotContaining("sk test");
        assertThatThrownBy(() -> StripeRefundGateway.builder().apiKey(API_KEY).build()).hasMessageContaining("ChargeResolver");
        assertThat(List.of(nowhere.callTimeout().orElseThrow())).as("read and connect").containsExactly(Duration.ofSeconds(2));
        StripeRefundGateway noCharge = StripeRefundGateway.builder().apiKey(API_KEY).apiBase(URI.create("http://127.0.0.1:" + closed))
                .charges((merchant, reference) -> null).build();
        assertThatThrownBy(() -> noCharge.createRefund("k_1", "r_1", "m_1", BigDecimal.ONE, "EUR")).as("nothing sent without a charge")
                .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.outcome()).isEqualTo(GatewayException.Outcome.UNAVAILABLE));
    }
}
