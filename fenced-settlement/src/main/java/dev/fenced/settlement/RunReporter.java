package dev.fenced.settlement;

/**
 * Where a run reports what it did, already bound to the run's resource and token by the worker
 * that started it: the run knows nothing of the worker's name, listener, clock, log or lease store. Called from
 * the run's threads; implementations must be thread-safe.
 */
interface RunReporter {
    /** One step of the run; {@code subjectId} is a refund id, a merchant, or null, as {@link SettlementEvent#refundId()} says. */
    void event(SettlementEvent.Type type, String subjectId, String detail);

    /** The gateway answered a refund or a lookup, or did not: for metrics. */
    void gatewayAnswered(GatewayAnswer.Kind kind);

    /** A refused write showed a stored fence above the run's token: the counter that issued it must be raised past it. */
    void fenceAheadOfCounter(long storedFence);
}
