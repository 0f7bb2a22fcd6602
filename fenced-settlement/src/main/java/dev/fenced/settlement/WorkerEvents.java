package dev.fenced.settlement;

import dev.fenced.LogKeys;
import java.time.Clock;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.slf4j.event.Level;

/**
 * How a {@link SettlementWorker} tells what it did: each {@link SettlementEvent} stamped by the
 * worker's clock, logged under the worker's logger with the resource, token and row in the MDC, then
 * handed to its {@link SettlementListener}. Thread-safe as far as the listener is; it decides
 * nothing, and a listener that throws changes nothing either: it is logged, as Curator's listener
 * containers do, and the step goes on.
 */
final class WorkerEvents {
    /** The worker's own logger: an application configures its level by the worker's name. */
    private static final Logger LOG = LoggerFactory.getLogger(SettlementWorker.class);

    private final String name;
    private final SettlementListener listener;
    private final Clock clock;

    WorkerEvents(String name, SettlementListener listener, Clock clock) {
        this.name = name;
        this.listener = listener;
        this.clock = clock;
    }

    long millis() {
        return clock.millis();
    }

    void gatewayAnswered(GatewayAnswer.Kind kind) {
        String outcome = kind.name().toLowerCase(Locale.ROOT);
        try {
            listener.onGatewayAnswer(outcome);
        } catch (RuntimeException e) {
            LOG.warn("{}: the settlement listener threw on the gateway answer {}; ignored", name, outcome, e);
        }
    }

    void emit(String resource, SettlementEvent.Type type, String refundId, long token, String detail) {
        emit(resource, type, refundId, token, detail, clock.millis());
    }

    void emit(String resource, SettlementEvent.Type type, String refundId, long token, String detail, long atMillis) {
        SettlementEvent event = new SettlementEvent(type, name, refundId, token, detail, atMillis);
        log(resource, event);
        try {
            listener.onEvent(event);
        } catch (RuntimeException e) {
            LOG.warn("{}: the settlement listener threw on {} {}{}; ignored", name, event.type().wireName(), resource,
                    refundId == null ? "" : " " + refundId, e);
        }
    }

    /**
     * Every decision, in the log: at INFO what a run did as a whole (lease taken, takeover
     * lookups, journal, outcome), at WARN what an operator must look at (violations, lost leases,
     * refunds in doubt or refused, the gateway down), per-refund steps at DEBUG.
     */
    private void log(String resource, SettlementEvent event) {
        Level level = switch (event.type()) {
            case ACQUIRED, CHECKED, JOURNALED, OUTCOME, BREAKPOINT -> Level.INFO;
            case VIOLATION, LEASE_LOST, LEFT, FAILED, GATEWAY_DOWN, DATABASE_WAIT -> Level.WARN;
            case ERROR -> Level.ERROR;
            case BUSY, CLAIMED, GATEWAY, CONFIRMED, SKIPPED, RELEASED -> Level.DEBUG;
        };
        if (!LOG.isEnabledForLevel(level)) {
            return;
        }
        try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource);
             MDC.MDCCloseable t = MDC.putCloseable(LogKeys.TOKEN, Long.toString(event.token()));
             MDC.MDCCloseable w = MDC.putCloseable(LogKeys.ROW, event.refundId() == null ? "" : event.refundId())) {
            LOG.atLevel(level).log("{} {} {}{}: {}", name, event.type().wireName(), resource,
                    event.refundId() == null ? "" : " " + event.refundId(), event.detail() == null ? "" : event.detail());
        }
    }
}
