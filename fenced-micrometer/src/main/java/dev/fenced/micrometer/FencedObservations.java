package dev.fenced.micrometer;

import dev.fenced.FenceViolation;
import dev.fenced.FencedObserver;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;

/**
 * The library's runs, acquisitions and refusals as Micrometer Observations: one instrumentation that
 * the registry's handlers turn into spans (Micrometer Tracing) and timers (Boot's meter handler)
 * alike. Pass it wherever a {@link FencedObserver} is taken, beside {@link FencedMeters}.
 *
 * <table>
 *   <caption>Observations</caption>
 *   <tr><th>name</th><th>low-cardinality keys</th><th>high-cardinality keys</th><th>covers</th></tr>
 *   <tr><td>{@value #RUN}</td><td>status: executed, busy, fenced_out, failed</td><td>fenced.resource</td>
 *       <td>a {@code FencedExecutor} run ({@code @FencedLock} included): the acquisition and the task, whose own
 *       observations (its database calls) nest in it</td></tr>
 *   <tr><td>{@value #ACQUIRE}</td><td>outcome: granted, busy, error</td><td>fenced.resource</td>
 *       <td>the acquisition inside a run</td></tr>
 *   <tr><td>{@value #REFUSAL}</td><td>operation: claim, confirm, finish, transaction</td>
 *       <td>fenced.table, fenced.token, fenced.stored_fence</td><td>each write the database refused, inside the
 *       run it ended, if any</td></tr>
 * </table>
 *
 * <p>Resources are high-cardinality values (spans carry them, meters do not). What it does not
 * cover: a lease taken outside a {@code FencedExecutor} (a ShedLock task, the settlement worker) is
 * counted by {@link FencedMeters} but opens no observation. Thread-safe.
 */
public final class FencedObservations implements FencedObserver {
    public static final String RUN = "fenced.run";
    public static final String ACQUIRE = "fenced.acquire";
    public static final String REFUSAL = "fenced.refusal";

    private final ObservationRegistry registry;

    private FencedObservations(ObservationRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    /** Observations in {@code registry}. */
    public static FencedObservations in(ObservationRegistry registry) {
        return new FencedObservations(registry);
    }

    @Override
    public Scope starting(Step step, String resource) {
        boolean run = step == Step.RUN;
        String outcomeKey = run ? "status" : "outcome";
        Observation observation = Observation.createNotStarted(run ? RUN : ACQUIRE, registry)
                .contextualName(run ? "fenced run" : "fenced acquire")
                .lowCardinalityKeyValue(outcomeKey, "unknown")
                .highCardinalityKeyValue("fenced.resource", resource)
                .start();
        Observation.Scope opened = observation.openScope();
        return new Scope() {
            @Override
            public void outcome(String outcome) {
                observation.lowCardinalityKeyValue(outcomeKey, outcome);
            }

            @Override
            public void error(Throwable failure) {
                observation.error(failure);
            }

            @Override
            public void close() {
                opened.close();
                observation.stop();
            }
        };
    }

    @Override
    public void fenceViolation(String operation, FenceViolation violation) {
        Observation refusal = Observation.createNotStarted(REFUSAL, registry).contextualName("fenced refusal")
                .lowCardinalityKeyValue("operation", operation)
                .highCardinalityKeyValue("fenced.table", String.valueOf(violation.table()))
                .highCardinalityKeyValue(KeyValue.of("fenced.token", Long.toString(violation.tokenPresented())))
                .highCardinalityKeyValue("fenced.stored_fence", String.valueOf(violation.storedFence()));
        refusal.start().stop();
    }
}
