package dev.fenced.settlement;

/**
 * Receives a worker's events, from the worker's threads; must be thread-safe and quick. A listener
 * that throws is logged at WARN and otherwise ignored: what the worker does with a refund never
 * depends on a listener.
 */
@FunctionalInterface
public interface SettlementListener {
    void onEvent(SettlementEvent event);

    /**
     * The gateway answered a refund or a lookup, or did not: {@code outcome} is one of
     * {@code succeeded}, {@code absent}, {@code rejected}, {@code unknown} (sent, answer lost),
     * {@code unavailable} (not sent). For metrics; the events already tell what the worker did with it.
     */
    default void onGatewayAnswer(String outcome) {
    }

    /** Hands every event and answer to each of {@code listeners} in turn. */
    static SettlementListener all(SettlementListener... listeners) {
        java.util.List<SettlementListener> each = java.util.List.of(listeners);
        return new SettlementListener() {
            @Override
            public void onEvent(SettlementEvent event) {
                each.forEach(listener -> listener.onEvent(event));
            }

            @Override
            public void onGatewayAnswer(String outcome) {
                each.forEach(listener -> listener.onGatewayAnswer(outcome));
            }
        };
    }
}
