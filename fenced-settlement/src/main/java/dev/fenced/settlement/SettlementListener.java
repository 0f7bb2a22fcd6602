package dev.fenced.settlement;

/** Receives a worker's events, from the worker's threads; must be thread-safe and quick. */
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
}
