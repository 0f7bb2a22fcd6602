package dev.fenced;

import java.time.Duration;
import java.util.List;

/**
 * Hears the decisions the library makes, for metrics: leases granted or refused, renewals, lost
 * counters reseeded, counters raised after a refused write, fence violations, and executor runs.
 * {@code fenced-micrometer} turns them into meters; {@link #NONE} ignores them.
 *
 * <p>Called on the thread that made the decision, after it was made: an implementation must be
 * thread-safe and quick. What it throws is dropped (every component wraps its observer with
 * {@link #all}): it changes no outcome. It sees no secrets. Logging does not go through here: the
 * modules log their decisions themselves.
 */
public interface FencedObserver {

    /** Ignores everything. */
    FencedObserver NONE = new FencedObserver() {
    };

    /** How one acquisition attempt ended. */
    enum AcquireOutcome {
        /** A lease and a token were granted. */
        GRANTED,
        /** Another holder's lease was live; contention is normal. */
        BUSY,
        /** The store failed: unreachable, a lost counter, a refused token. */
        ERROR
    }

    /** How one renewal ended. */
    enum RenewalOutcome {
        /** The lease was still this owner's and was extended. */
        RENEWED,
        /** The lease was gone: expired, or another holder's. */
        LOST,
        /** The store could not answer; the lease may or may not be live. */
        ERROR
    }

    /** A step the library is about to take on the calling thread, for tracing: see {@link #starting}. */
    enum Step {
        /** A {@link FencedExecutor} run: its acquisition, its task, its release. */
        RUN,
        /** The acquisition inside a run. */
        ACQUIRE
    }

    /**
     * A step in progress, ended on the thread that started it: {@link #outcome} once with how it
     * ended ({@code executed}, {@code busy}, {@code fenced_out}, {@code failed} for a run;
     * {@code granted}, {@code busy}, {@code error} for an acquisition), {@link #error} with what
     * failed it when something did (a refusal, the task's exception, the store's), then {@link #close}.
     */
    interface Scope extends AutoCloseable {
        /** Opens nothing. */
        Scope NONE = () -> {
        };

        default void outcome(String outcome) {
        }

        default void error(Throwable failure) {
        }

        @Override
        void close();
    }

    /**
     * The library starts {@code step} on {@code resource} on this thread; what a task does on this
     * thread until the scope is closed happens inside it, so a tracing implementation can open a
     * span here that the task's own spans nest in (fenced-micrometer's {@code FencedObservations}).
     * The meters' callbacks ({@link #executed}, {@link #acquired}) are called as before. The default
     * opens nothing.
     */
    default Scope starting(Step step, String resource) {
        return Scope.NONE;
    }

    /** How a {@link FencedExecutor} run ended; see {@link FencedExecutor.Status}. */
    default void executed(String resource, FencedExecutor.Status status, Duration took) {
    }

    /** One {@link LeaseStore#tryAcquire} finished; {@code token} is 0 unless granted. */
    default void acquired(String resource, AcquireOutcome outcome, long token, Duration took) {
    }

    /** One {@link Lease#renew} finished. */
    default void renewed(String resource, long token, RenewalOutcome outcome) {
    }

    /** A missing counter was raised from the stored fences ({@code floor}) to {@code reseededTo} before a token. */
    default void counterReseeded(String resource, long floor, long reseededTo) {
    }

    /** A refused write revealed a stored fence, and the counter was raised to at least it. */
    default void counterRaised(String resource, long storedFence) {
    }

    /**
     * The database refused a write of a stale token. {@code operation} names the write: {@code claim},
     * {@code confirm}, {@code finish}, {@code transaction}, or one the caller chose.
     */
    default void fenceViolation(String operation, FenceViolation violation) {
    }

    /**
     * Tells every observer in turn, skipping {@link #NONE}s; what one throws is dropped and does not
     * stop the others.
     */
    static FencedObserver all(FencedObserver... observers) {
        List<FencedObserver> list = List.of(observers).stream().filter(o -> o != NONE).toList();
        return list.isEmpty() ? NONE : new ObserverFanOut(list);
    }
}
