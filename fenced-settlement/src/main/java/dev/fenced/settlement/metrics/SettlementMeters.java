package dev.fenced.settlement.metrics;

import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * A settlement worker's gateway answers, settled refunds and refused runs as meters, under
 * {@code settlement.*}, apart from the library's {@code fenced.*} meters; give it to
 * {@code SettlementWorker.Builder.listener} (beside any other listener). It lives beside the worker
 * because it knows the worker's events; Micrometer is an optional dependency of this module,
 * needed only by an application that uses this class.
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>counts</th></tr>
 *   <tr><td>{@value #GATEWAY_CALLS}</td><td>counter</td><td>outcome: succeeded, absent, rejected, unknown, unavailable</td><td>gateway refunds and lookups</td></tr>
 *   <tr><td>{@value #SETTLED}</td><td>counter</td><td>state: sent, failed</td><td>refunds a worker finished</td></tr>
 *   <tr><td>{@value #VIOLATIONS}</td><td>counter</td><td></td><td>runs a refused write stopped</td></tr>
 *   <tr><td>{@value #PROVIDER_NEWS}</td><td>counter</td><td>source: webhook, poll; outcome: settled, returned, and for
 *       webhooks duplicate, no_change, not_yet_sent, unknown_refund, mismatch, ignored, rejected, store_unavailable; for polls
 *       unanswered, missing</td><td>the provider's news on refunds it accepted ({@link #providerNews})</td></tr>
 * </table>
 *
 * Thread-safe. It counts what the worker reports; it does not time the runs or tag by merchant.
 */
public final class SettlementMeters implements SettlementListener {
    public static final String GATEWAY_CALLS = "settlement.gateway.calls";
    public static final String SETTLED = "settlement.refunds.settled";
    public static final String VIOLATIONS = "settlement.fence.violations";
    public static final String PROVIDER_NEWS = "settlement.provider.news";

    private final MeterRegistry registry;
    private final Counter sent;
    private final Counter failed;
    private final Counter violations;

    private SettlementMeters(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.sent = settled("sent");
        this.failed = settled("failed");
        this.violations = Counter.builder(VIOLATIONS).description("Settlement runs a refused fenced write stopped").register(registry);
    }

    /** Meters in {@code registry}. */
    public static SettlementMeters in(MeterRegistry registry) {
        return new SettlementMeters(registry);
    }

    private Counter settled(String state) {
        return Counter.builder(SETTLED).description("Refunds a worker finished").tag("state", state).register(registry);
    }

    @Override
    public void onEvent(SettlementEvent event) {
        if (event.type() == SettlementEvent.Type.CONFIRMED) {
            sent.increment();
        } else if (event.type() == SettlementEvent.Type.FAILED) {
            failed.increment();
        } else if (event.type() == SettlementEvent.Type.VIOLATION) {
            violations.increment();
        }
    }

    /**
     * Counts {@code count} refunds (or deliveries) of the provider's news: what a webhook delivery
     * did ({@code WebhookReceiver.Outcome}, lower case) or what a poll found.
     */
    public void providerNews(String source, String outcome, int count) {
        if (count > 0) {
            Counter.builder(PROVIDER_NEWS).description("The provider's news on refunds it accepted, by source and outcome")
                    .tag("source", source).tag("outcome", outcome).register(registry).increment(count);
        }
    }

    @Override
    public void onGatewayAnswer(String outcome) {
        Counter.builder(GATEWAY_CALLS).description("Gateway refunds and lookups by answer").tag("outcome", outcome)
                .register(registry).increment();
    }
}
