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

    /**
     * Hands every event and answer to each of {@code listeners} in turn, also to those after one that
     * threw; the first throw is rethrown once all have heard, for the worker to log.
     */
    static SettlementListener all(SettlementListener... listeners) {
        java.util.List<SettlementListener> each = java.util.List.of(listeners);
        return new SettlementListener() {
            @Override
            public void onEvent(SettlementEvent event) {
                deliver(each, listener -> listener.onEvent(event));
            }

            @Override
            public void onGatewayAnswer(String outcome) {
                deliver(each, listener -> listener.onGatewayAnswer(outcome));
            }
        };
    }

    private static void deliver(java.util.List<SettlementListener> each, java.util.function.Consumer<SettlementListener> call) {
        RuntimeException first = null;
        for (SettlementListener listener : each) {
            try {
                call.accept(listener);
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
