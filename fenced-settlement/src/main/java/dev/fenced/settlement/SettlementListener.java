package dev.fenced.settlement;

/** Receives a worker's events, from the worker's threads; must be thread-safe and quick. */
@FunctionalInterface
public interface SettlementListener {
    void onEvent(SettlementEvent event);
}
