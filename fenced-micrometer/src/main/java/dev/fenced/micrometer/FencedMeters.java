package dev.fenced.micrometer;

import dev.fenced.FenceViolation;
import dev.fenced.FencedExecutor;
import dev.fenced.FencedObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * The library's decisions as Micrometer meters in the caller's registry. Pass it wherever a
 * {@link FencedObserver} is taken: {@code RedisLeaseStore.Builder.observer}, {@code
 * FencedRows.observedBy}, {@code FencedTransactions.observedBy}, {@code FencedExecutor.Builder.observer}.
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>counts</th></tr>
 *   <tr><td>{@value #ACQUIRE}</td><td>timer</td><td>outcome: granted, busy, error</td><td>acquisition attempts and their latency</td></tr>
 *   <tr><td>{@value #RENEWALS}</td><td>counter</td><td>outcome: renewed, lost, error</td><td>renewals</td></tr>
 *   <tr><td>{@value #RESEEDS}</td><td>counter</td><td></td><td>lost counters reseeded from the stored fences</td></tr>
 *   <tr><td>{@value #RAISES}</td><td>counter</td><td></td><td>counters raised after a refused write showed them behind</td></tr>
 *   <tr><td>{@value #VIOLATIONS}</td><td>counter</td><td>operation: claim, confirm, finish, transaction</td><td>writes the database refused</td></tr>
 *   <tr><td>{@value #RUNS}</td><td>timer</td><td>status: executed, busy, fenced_out, failed</td><td>{@link FencedExecutor} runs</td></tr>
 * </table>
 *
 * <p>No meter is tagged with the resource: a tag per merchant would grow the registry without
 * bound. Thread-safe.
 */
public final class FencedMeters implements FencedObserver {
    public static final String ACQUIRE = "fenced.lease.acquire";
    public static final String RENEWALS = "fenced.lease.renewals";
    public static final String RESEEDS = "fenced.counter.reseeds";
    public static final String RAISES = "fenced.counter.raises";
    public static final String VIOLATIONS = "fenced.fence.violations";
    public static final String RUNS = "fenced.executor.runs";

    private final MeterRegistry registry;
    private final Counter reseeds;
    private final Counter raises;

    private FencedMeters(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.reseeds = Counter.builder(RESEEDS).description("Lost counters reseeded from the stored fences").register(registry);
        this.raises = Counter.builder(RAISES).description("Counters raised after a refused write showed them behind").register(registry);
        for (AcquireOutcome outcome : AcquireOutcome.values()) {
            acquireTimer(outcome);
        }
    }

    /** Meters in {@code registry}; registering them twice in one registry is harmless (Micrometer returns the same meters). */
    public static FencedMeters in(MeterRegistry registry) {
        return new FencedMeters(registry);
    }

    @Override
    public void acquired(String resource, AcquireOutcome outcome, long token, Duration took) {
        acquireTimer(outcome).record(took);
    }

    private Timer acquireTimer(AcquireOutcome outcome) {
        return Timer.builder(ACQUIRE).description("Lease acquisition attempts").tag("outcome", tag(outcome)).register(registry);
    }

    @Override
    public void renewed(String resource, long token, RenewalOutcome outcome) {
        Counter.builder(RENEWALS).description("Lease renewals").tag("outcome", tag(outcome)).register(registry).increment();
    }

    @Override
    public void counterReseeded(String resource, long floor, long reseededTo) {
        reseeds.increment();
    }

    @Override
    public void counterRaised(String resource, long storedFence) {
        raises.increment();
    }

    @Override
    public void fenceViolation(String operation, FenceViolation violation) {
        Counter.builder(VIOLATIONS).description("Fenced writes the database refused").tag("operation", operation)
                .register(registry).increment();
    }

    @Override
    public void executed(String resource, FencedExecutor.Status status, Duration took) {
        Timer.builder(RUNS).description("Tasks run under a lease").tag("status", tag(status)).register(registry).record(took);
    }

    static String tag(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }
}
