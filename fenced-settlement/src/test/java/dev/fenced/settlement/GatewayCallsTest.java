package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.provider.GatewayException;
import dev.fenced.provider.GatewayException.Outcome;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.RefundGateway;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * How a sequence of answers becomes one {@link GatewayAnswer}: the decision the worker changes a
 * row's state on. The provider here answers from a script, since the point is the classification;
 * the worker's tests run it against the real HTTP gateway.
 */
class GatewayCallsTest {
    private static final RefundRow ROW = new RefundRow("r_1", "m_1", new BigDecimal("70.25"), "EUR", "key-1", "sending", "d_1");
    private static final GatewayRefund PAID = new GatewayRefund("gw_1", "key-1", "r_1", "m_1", new BigDecimal("70.25"), "EUR", 0);

    /** Throws the scripted failures in order, then answers with {@code created}; lookups answer {@code found}. */
    private static RefundGateway scripted(List<GatewayException> failures, GatewayRefund created, GatewayRefund found) {
        Deque<GatewayException> script = new ArrayDeque<>(failures);
        return new RefundGateway() {
            @Override
            public GatewayRefund createRefund(String key, String reference, String merchant, BigDecimal amount, String currency) {
                if (!script.isEmpty()) {
                    throw script.poll();
                }
                return created;
            }

            @Override
            public Optional<GatewayRefund> findByKey(String key) {
                return Optional.ofNullable(found);
            }

            @Override
            public List<GatewayRefund> refundsOf(String merchant) {
                return found == null ? List.of() : List.of(found);
            }
        };
    }

    private static GatewayAnswer create(RefundGateway gateway) {
        return new GatewayCalls(gateway, 3, Duration.ZERO, () -> false,
                new KeyRetention(KeyRetention.DEFAULT_RETENTION, KeyRetention.DEFAULT_MARGIN, java.time.Clock.systemUTC())).create(ROW);
    }

    private static GatewayException failure(Outcome outcome) {
        return new GatewayException("scripted " + outcome, outcome == Outcome.REJECTED ? 422 : 0, outcome, null);
    }

    @Test
    void aRefusalWithNothingInDoubtIsDefinitive() {
        assertThat(create(scripted(List.of(failure(Outcome.REJECTED)), null, null)).kind()).isEqualTo(GatewayAnswer.Kind.REJECTED);
    }

    /** A lost answer, then a refusal: the first attempt may have paid, so the lookup decides, never the refusal. */
    @Test
    void aRefusalAfterALostAnswerIsNotTrustedOverTheLookup() {
        assertThat(create(scripted(List.of(failure(Outcome.UNKNOWN), failure(Outcome.REJECTED)), null, PAID)).kind())
                .as("the refund the lost attempt made").isEqualTo(GatewayAnswer.Kind.SUCCEEDED);
        assertThat(create(scripted(List.of(failure(Outcome.UNKNOWN), failure(Outcome.REJECTED)), null, null)).kind())
                .as("nothing found yet: still in doubt, never failed").isEqualTo(GatewayAnswer.Kind.UNKNOWN);
    }

    @Test
    void connectionsThatNeverLeftAreUnavailableAndLostAnswersAreResolvedByTheLookup() {
        List<GatewayException> refused = List.of(failure(Outcome.UNAVAILABLE), failure(Outcome.UNAVAILABLE), failure(Outcome.UNAVAILABLE));
        assertThat(create(scripted(refused, null, PAID)).kind()).as("no lookup when nothing left").isEqualTo(GatewayAnswer.Kind.UNAVAILABLE);
        List<GatewayException> lost = List.of(failure(Outcome.UNKNOWN), failure(Outcome.UNAVAILABLE), failure(Outcome.UNAVAILABLE));
        assertThat(create(scripted(lost, null, PAID)).kind()).isEqualTo(GatewayAnswer.Kind.SUCCEEDED);
    }

    @Test
    void aRefundThatDoesNotMatchTheRowIsARejectionWithItsReason() {
        GatewayRefund other = new GatewayRefund("gw_9", "key-1", "r_1", "m_2", new BigDecimal("70.25"), "EUR", 0);
        GatewayAnswer answer = create(scripted(List.of(), other, null));
        assertThat(answer.kind()).isEqualTo(GatewayAnswer.Kind.REJECTED);
        assertThat(answer.reason()).contains("m_2").contains("m_1");
    }

    /**
     * A refund under the row's key, with the row's merchant, amount and currency, that names another
     * deployment (or another row) as its owner is not the row's. Control: the same refund naming the
     * row's own owner, or none (made before owners were recorded), succeeds.
     */
    @Test
    void aRefundAnotherOwnerMadeUnderTheRowsKeyIsARejection() {
        for (Map<String, String> owner : List.of(Map.of("deployment", "d_2", "merchant", "m_1", "refund", "r_1"),
                Map.of("deployment", "d_1", "merchant", "m_1", "refund", "r_9"))) {
            GatewayAnswer answer = create(scripted(List.of(), withMetadata(PAID, owner), null));
            assertThat(answer.kind()).as(owner.toString()).isEqualTo(GatewayAnswer.Kind.REJECTED);
            assertThat(answer.reason()).contains("belongs to deployment " + owner.get("deployment"));
        }
        assertThat(create(scripted(List.of(), withMetadata(PAID, ROW.owner().metadata()), null)).kind()).isEqualTo(GatewayAnswer.Kind.SUCCEEDED);
        assertThat(create(scripted(List.of(), PAID, null)).kind()).isEqualTo(GatewayAnswer.Kind.SUCCEEDED);
    }

    private static GatewayRefund withMetadata(GatewayRefund r, Map<String, String> metadata) {
        return new GatewayRefund(r.id(), r.idempotencyKey(), r.reference(), r.merchant(), r.amount(), r.currency(), r.createdAt(), metadata);
    }

    /**
     * A request in doubt whose answer took until the row's key may be forgotten: no retry goes out
     * under the key, and the closing lookup asks by reference, not by the key. Control: the same
     * answers within the retention are retried and looked up by key.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "the answer took a day: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void noRetryStartsOnceTheKeyMayBeForgotten(boolean slowAnswer) {
        dev.fenced.testing.SettableClock clock = new dev.fenced.testing.SettableClock();
        RefundRow row = new RefundRow("r_1", "m_1", new BigDecimal("70.25"), "EUR", "key-1", "sending", "d_1", clock.instant());
        List<String> calls = new java.util.ArrayList<>();
        RefundGateway gateway = new RefundGateway() {
            @Override
            public GatewayRefund createRefund(String key, String reference, String merchant, BigDecimal amount, String currency) {
                calls.add("create");
                if (slowAnswer) {
                    clock.advance(Duration.ofHours(23));
                }
                throw failure(Outcome.UNKNOWN);
            }

            @Override
            public Optional<GatewayRefund> findByKey(String key) {
                calls.add("by key");
                return Optional.of(PAID);
            }

            @Override
            public List<GatewayRefund> findByReference(String merchant, String reference) {
                calls.add("by reference");
                return List.of(PAID);
            }

            @Override
            public List<GatewayRefund> refundsOf(String merchant) {
                return List.of(PAID);
            }
        };
        GatewayAnswer answer = new GatewayCalls(gateway, 3, Duration.ZERO, () -> false,
                new KeyRetention(Duration.ofHours(24), Duration.ofHours(1), clock)).create(row);
        assertThat(answer.kind()).isEqualTo(GatewayAnswer.Kind.SUCCEEDED);
        assertThat(calls).containsExactlyElementsOf(slowAnswer ? List.of("create", "by reference") : List.of("create", "create", "create", "by key"));
    }
}
