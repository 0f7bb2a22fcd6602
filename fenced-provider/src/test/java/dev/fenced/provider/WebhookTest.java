package dev.fenced.provider;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.testing.SettableClock;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Signed webhooks: the signature check in Stripe's scheme, and events read only when whole. */
class WebhookTest {
    private static final String OLD_SECRET = "whsec_old_0123456789";
    private static final String NEW_SECRET = "whsec_new_9876543210";
    private static final BigDecimal AMOUNT = new BigDecimal("70.25");

    private static byte[] body(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aSignatureHoldsForItsBodyWithinTheToleranceAndUnderEitherSecretDuringARotation() {
        SettableClock clock = new SettableClock();
        long now = clock.millis() / 1000;
        byte[] body = body("{\"id\":\"evt_1\",\"type\":\"refund.updated\"}");
        WebhookSignature rotating = WebhookSignature.of(List.of(OLD_SECRET, NEW_SECRET), Duration.ofMinutes(5), clock);
        rotating.verify(WebhookSignature.header(now, body, List.of(OLD_SECRET)), body);
        rotating.verify(WebhookSignature.header(now, body, List.of(NEW_SECRET)), body);
        rotating.verify(WebhookSignature.header(now - 300, body, List.of(NEW_SECRET)), body);

        WebhookSignature rotated = WebhookSignature.of(List.of(NEW_SECRET), Duration.ofMinutes(5), clock);
        String oldHeader = WebhookSignature.header(now, body, List.of(OLD_SECRET));
        assertThatThrownBy(() -> rotated.verify(oldHeader, body)).as("the old secret, once removed")
                .isInstanceOf(WebhookRejectedException.class).hasMessage("no v1 signature matches a configured webhook secret")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(OLD_SECRET, NEW_SECRET, oldHeader.substring(oldHeader.indexOf("v1=") + 3)));
        assertThatThrownBy(() -> rotated.verify(WebhookSignature.header(now, body, List.of(NEW_SECRET)),
                body("{\"id\":\"evt_1\",\"type\":\"refund.failed\"}"))).as("another body").isInstanceOf(WebhookRejectedException.class);
        assertThatThrownBy(() -> rotated.verify(WebhookSignature.header(now - 301, body, List.of(NEW_SECRET)), body))
                .hasMessage("the delivery's timestamp is 301 s old, outside the tolerance of 300 s");
        assertThatThrownBy(() -> rotated.verify(WebhookSignature.header(now + 301, body, List.of(NEW_SECRET)), body))
                .hasMessageContaining("301 s ahead");
        assertThatThrownBy(() -> rotated.verify(null, body)).hasMessage("no Stripe-Signature header");
        assertThatThrownBy(() -> rotated.verify("t=abc,v1=00", body)).hasMessage("Stripe-Signature header has a malformed timestamp");
        assertThatThrownBy(() -> rotated.verify("t=" + now, body)).hasMessage("Stripe-Signature header has no v1= signature");
        assertThatThrownBy(() -> rotated.verify("t=" + now + ",v1=" + HexFormat.of().formatHex(new byte[32]), body))
                .isInstanceOf(WebhookRejectedException.class);
        // Control: a header carrying a wrong signature and the right one is accepted, as Stripe's libraries accept it.
        rotated.verify("t=" + now + ",v1=" + HexFormat.of().formatHex(new byte[32]) + ","
                + WebhookSignature.header(now, body, List.of(NEW_SECRET)).substring(("t=" + now + ",").length()), body);
    }

    @Test
    void badSecretsAndTolerancesAreRefusedWithoutShowingTheSecret() {
        assertThatThrownBy(() -> WebhookSignature.of(List.of())).hasMessage("at least one webhook secret is needed");
        assertThatThrownBy(() -> WebhookSignature.of(List.of("whsec_XYZ 1"))).isInstanceOf(IllegalArgumentException.class)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("XYZ"));
        assertThatThrownBy(() -> WebhookSignature.of(List.of(NEW_SECRET), Duration.ZERO, new SettableClock()))
                .hasMessageContaining("tolerance must be at least 1 s");
    }

    @Test
    void eventsAreReadOnlyWhenWholeAndTheirRefundNamesItsRow() {
        GatewayRefund refund = new GatewayRefund("gw_1", "k", "r_815", "m_4471", AMOUNT, "EUR", 0, Map.of(), "failed", "expired_or_canceled_card");
        WebhookEvent event = new WebhookEvent("evt_1", WebhookEvent.REFUND_FAILED, 1, refund);
        assertThat(WebhookEvent.parse(event.toJson())).isEqualTo(event);
        WebhookEvent round = new WebhookEvent("evt_1", WebhookEvent.REFUND_FAILED, 1,
                new GatewayRefund("gw_1", "k", "r_815", "m_4471", new BigDecimal("10.00"), "EUR", 0, Map.of(), "succeeded", null));
        assertThat(WebhookEvent.parse(round.toJson()).refund().amount()).as("the amount as sent, scale kept").hasToString("10.00");
        assertThat(WebhookEvent.parse(body("{\"id\":\"evt_2\",\"type\":\"charge.succeeded\",\"data\":{\"object\":{}}}")).aboutRefund()).isFalse();
        assertThatThrownBy(() -> WebhookEvent.parse(body("not json"))).hasMessage("event body is not JSON");
        assertThatThrownBy(() -> WebhookEvent.parse(body("{\"type\":\"refund.updated\"}"))).hasMessage("event has no valid id");
        assertThatThrownBy(() -> WebhookEvent.parse(body("{\"id\":\"evt_3\",\"type\":\"refund.updated\",\"data\":{\"object\":{\"id\":\"gw_1\"}}}")))
                .hasMessageContaining("without its id, reference, merchant");
    }
}
