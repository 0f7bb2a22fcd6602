package dev.fenced;

import dev.fenced.internal.Durations;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs a task under a lease, in the spirit of ShedLock's {@code LockingTaskExecutor}: takes the
 * lease or skips the run, renews it while the task runs, hands the task the lease and its token,
 * releases it after (or, with a {@link Builder#minHold minimum hold}, keeps it until the hold is out),
 * and reports how the run ended as an {@link Outcome} (never by throwing).
 *
 * <p>Guarantees: the task runs only with a freshly granted lease; when the task's fenced write is
 * refused (a {@link FenceViolation} anywhere in what it throws), the store is told the stored
 * fence ({@link LeaseStore#observeStoredFence}), so a counter that fell behind is raised instead of
 * being refused again on every run. Does not guarantee: that the task runs alone. A task paused
 * past the TTL keeps running; only writes fenced with {@link Lease#token()} are safe, and the
 * executor cannot stop a task whose renewal failed (it records it in
 * {@link Outcome#leaseLostWhileRunning()}).
 *
 * <p>An interrupt is never swallowed: a task that throws {@link InterruptedException} ends
 * {@link Status#FAILED} with the calling thread's interrupt flag set again, after the release.
 *
 * <p>Immutable and thread-safe; one executor serves any number of resources.
 */
public final class FencedExecutor {
    private static final System.Logger LOG = System.getLogger(FencedExecutor.class.getName());

    private final LeaseStore store;
    private final Duration ttl;
    private final Duration minHold;
    private final double renewalFraction;
    private final ScheduledExecutorService scheduler;
    /** Null: the watchdog measures the TTL since the last renewal on the monotonic clock. */
    private final Clock clock;
    private final FencedObserver observer;

    private FencedExecutor(Builder b) {
        this(b.store, b.ttl, b.minHold, b.renewalFraction, b.scheduler, b.clock, b.observer);
    }

    private FencedExecutor(LeaseStore store, Duration ttl, Duration minHold, double renewalFraction, ScheduledExecutorService scheduler,
                           Clock clock, FencedObserver observer) {
        requireMinHoldWithinTtl(minHold, ttl);
        this.store = store;
        this.ttl = ttl;
        this.minHold = minHold;
        this.renewalFraction = renewalFraction;
        this.scheduler = scheduler;
        this.clock = clock;
        this.observer = observer;
    }

    /**
     * This executor with another lease TTL and minimum hold, everything else shared: for one kind of
     * run that needs its own (an annotated method's).
     *
     * @throws IllegalArgumentException for an invalid TTL, or a minimum hold below zero or above the TTL
     */
    public FencedExecutor with(Duration ttl, Duration minHold) {
        return new FencedExecutor(store, LeaseArguments.requireValidTtl(ttl), Objects.requireNonNull(minHold, "minHold"), renewalFraction,
                scheduler, clock, observer);
    }

    /** The lease TTL of each run. */
    public Duration ttl() {
        return ttl;
    }

    /** How long a lease is kept at least from its grant, however soon the task returns. */
    public Duration minHold() {
        return minHold;
    }

    private static void requireMinHoldWithinTtl(Duration minHold, Duration ttl) {
        if (minHold.isNegative() || minHold.compareTo(ttl) > 0) {
            throw new IllegalArgumentException("the minimum hold must be between 0 and the TTL (" + Durations.human(ttl) + "), got "
                    + Durations.human(minHold));
        }
    }

    /** Starts a builder for an executor on {@code store}. */
    public static Builder builder(LeaseStore store) {
        return new Builder(store);
    }

    /** How a run ended. */
    public enum Status {
        /** The lease was granted and the task returned. */
        EXECUTED,
        /** Another holder's lease was live; the task did not run. */
        BUSY,
        /** The database refused one of the task's fenced writes: a newer holder owns the resource. Never retry with this token. */
        FENCED_OUT,
        /** The store failed before the task ran, or the task threw something other than a fence violation. */
        FAILED
    }

    /** The work to run under the lease; carry {@code lease.token()} into every protected write. */
    @FunctionalInterface
    public interface Task<T> {
        T run(Lease lease) throws Exception;
    }

    /**
     * How a run ended.
     *
     * @param resource the resource the run was for
     * @param status how it ended
     * @param token the token the task ran with, 0 when it did not run
     * @param result what the task returned, when {@link Status#EXECUTED}
     * @param failure the task's or the store's exception, when {@link Status#FENCED_OUT} or {@link Status#FAILED}
     * @param leaseLostWhileRunning a renewal found the lease gone or failed while the task ran
     */
    public record Outcome<T>(String resource, Status status, long token, T result, Throwable failure,
                             boolean leaseLostWhileRunning) {

        /** The result of an executed run; otherwise the failure, rethrown (wrapped when checked), or a {@link FencedException} for a busy lease. */
        public T orThrow() {
            if (status == Status.EXECUTED) {
                return result;
            }
            if (status == Status.BUSY) {
                throw new FencedException("lease for '" + resource + "' is held by another holder; the task did not run");
            }
            if (failure instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new FencedException("task under '" + resource + "' with token " + token + " failed: " + failure, failure);
        }

        /** The fence violation that ended the run, when {@link Status#FENCED_OUT}. */
        public Optional<FenceViolation> violation() {
            return Optional.ofNullable(FencedExecutor.violationIn(failure));
        }
    }

    /**
     * Runs {@code task} if the lease on {@code resource} can be taken now.
     *
     * @throws IllegalArgumentException for an invalid resource name (a caller's mistake, not an outcome)
     */
    public <T> Outcome<T> execute(String resource, Task<T> task) {
        LeaseArguments.requireValidResource(resource);
        Objects.requireNonNull(task, "task");
        long started = System.nanoTime();
        try (FencedObserver.Scope run = observer.starting(FencedObserver.Step.RUN, resource)) {
            Outcome<T> outcome;
            try {
                outcome = acquireAndRun(resource, task);
            } catch (RuntimeException | Error e) {
                run.error(e); // a caller's mistake or an Error: no outcome, but the trace shows why
                throw e;
            }
            observer.executed(resource, outcome.status(), Duration.ofNanos(System.nanoTime() - started));
            run.outcome(outcome.status().name().toLowerCase(Locale.ROOT));
            if (outcome.failure() != null) {
                run.error(outcome.failure());
            }
            return outcome;
        }
    }

    private <T> Outcome<T> acquireAndRun(String resource, Task<T> task) {
        Optional<Lease> granted;
        try (FencedObserver.Scope acquisition = observer.starting(FencedObserver.Step.ACQUIRE, resource)) {
            try {
                granted = store.tryAcquire(resource, ttl);
            } catch (IllegalArgumentException e) {
                throw e;
            } catch (RuntimeException e) {
                acquisition.outcome("error");
                acquisition.error(e);
                LOG.log(Level.WARNING, "could not take the lease for {0}: {1}", resource, e.getMessage());
                return new Outcome<>(resource, Status.FAILED, 0, null, e, false);
            }
            acquisition.outcome(granted.isPresent() ? "granted" : "busy");
        }
        if (granted.isEmpty()) {
            LOG.log(Level.DEBUG, "lease for {0} is busy; skipped", resource);
            return new Outcome<>(resource, Status.BUSY, 0, null, null, false);
        }
        Lease lease = granted.get();
        long grantedAt = System.nanoTime();
        AtomicBoolean lost = new AtomicBoolean();
        LeaseWatchdog watchdog = renewalFraction == 0 ? null : startWatchdog(lease, (l, cause) -> lost.set(true));
        boolean interrupted = false;
        boolean fencedOut = false;
        try {
            T result = task.run(lease);
            return new Outcome<>(resource, Status.EXECUTED, lease.token(), result, null, lost.get());
        } catch (Exception e) {
            // Throwing InterruptedException cleared the thread's flag; the caller must still see it.
            interrupted = e instanceof InterruptedException;
            FenceViolation violation = violationIn(e);
            if (violation == null) {
                LOG.log(Level.WARNING, "task under {0} with token {1} failed: {2}", resource, lease.token(), e.toString());
                return new Outcome<>(resource, Status.FAILED, lease.token(), null, e, lost.get());
            }
            fencedOut = true;
            raiseCounter(resource, violation);
            LOG.log(Level.WARNING, "task under {0} with token {1} was fenced out: {2}", resource, lease.token(),
                    violation.getMessage());
            return new Outcome<>(resource, Status.FENCED_OUT, lease.token(), null, e, lost.get());
        } finally {
            if (watchdog != null) {
                watchdog.close();
            }
            // A store's blocking call fails on an interrupted thread (Lettuce's at once, whether or
            // not the command ran): release with the flag down, and set it again after.
            interrupted |= Thread.interrupted();
            Duration heldFor = Duration.ofNanos(System.nanoTime() - grantedAt);
            // Fenced out, a newer holder has the resource: there is no lease of this run's left to hold.
            if (!fencedOut && heldFor.compareTo(minHold) < 0) {
                keepUntilMinHold(lease, minHold.minus(heldFor));
            } else {
                release(lease);
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private LeaseWatchdog startWatchdog(Lease lease, LeaseLostListener listener) {
        return clock == null
                ? LeaseWatchdog.start(lease, ttl, renewalFraction, listener, scheduler)
                : LeaseWatchdog.start(lease, ttl, renewalFraction, listener, scheduler, clock);
    }

    private void raiseCounter(String resource, FenceViolation violation) {
        Long stored = violation.storedFence();
        if (stored == null) {
            return;
        }
        try {
            store.observeStoredFence(resource, stored);
        } catch (RuntimeException e) {
            // The next holder's write is refused too and tells the store again.
            LOG.log(Level.WARNING, "could not raise the counter of {0} to {1}: {2}", resource, stored, e.getMessage());
        }
    }

    /**
     * A task that returned before the minimum hold leaves its lease to end by itself then, as
     * ShedLock's {@code lockAtLeastFor} does, so the same short job does not run again at once
     * elsewhere: one renewal to what is left, and no release.
     */
    private static void keepUntilMinHold(Lease lease, Duration left) {
        try {
            if (!lease.renew(left.toMillis() < 1 ? Duration.ofMillis(1) : left)) {
                LOG.log(Level.INFO, "lease for {0} with token {1} ended before its minimum hold", lease.resource(), lease.token());
            }
        } catch (RuntimeException e) {
            // Not renewed: the lease ends by its TTL, which is no shorter than the minimum hold.
            LOG.log(Level.WARNING, "could not keep the lease for {0} until its minimum hold: {1}", lease.resource(), e.getMessage());
        }
    }

    private static void release(Lease lease) {
        try {
            if (!lease.release()) {
                LOG.log(Level.INFO, "lease for {0} with token {1} had already expired when released",
                        lease.resource(), lease.token());
            }
        } catch (RuntimeException e) {
            // The lease expires by its TTL; releasing early is only a courtesy to the next holder.
            LOG.log(Level.WARNING, "could not release the lease for {0}: {1}", lease.resource(), e.getMessage());
        }
    }

    static FenceViolation violationIn(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof FenceViolation violation) {
                return violation;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }

    /** Configures a {@link FencedExecutor}. */
    public static final class Builder {
        private final LeaseStore store;
        private Duration ttl = Duration.ofSeconds(30);
        private Duration minHold = Duration.ZERO;
        private double renewalFraction = 1.0 / 3;
        private ScheduledExecutorService scheduler = LeaseWatchdog.sharedScheduler();
        private Clock clock;
        private FencedObserver observer = FencedObserver.NONE;

        private Builder(LeaseStore store) {
            this.store = Objects.requireNonNull(store, "store");
        }

        /** The lease's TTL; 30 s by default. */
        public Builder ttl(Duration ttl) {
            this.ttl = LeaseArguments.requireValidTtl(ttl);
            return this;
        }

        /**
         * Keep each lease at least this long from its grant, however soon the task returns (ShedLock's
         * {@code lockAtLeastFor}); 0, the default, releases at once. At most the TTL; checked at {@link #build()}.
         */
        public Builder minHold(Duration minHold) {
            this.minHold = Objects.requireNonNull(minHold, "minHold");
            return this;
        }

        /** Renew every {@code fraction} of the TTL while the task runs (a third by default); 0 turns renewal off. */
        public Builder renewalFraction(double fraction) {
            if (!(fraction == 0 || (fraction > 0 && fraction < 1))) {
                throw new IllegalArgumentException("renewal fraction must be 0 (off) or between 0 and 1 exclusive, got " + fraction);
            }
            this.renewalFraction = fraction;
            return this;
        }

        /** Where renewals run; the process's shared watchdog threads by default. Never shut down by the executor. */
        public Builder scheduler(ScheduledExecutorService scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /**
         * The clock by which the renewals' watchdog tells that the TTL since the last renewal has run
         * out; the monotonic clock by default. For tests that move time together with a manual
         * {@link #scheduler}.
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Hears how each run ended. */
        public Builder observer(FencedObserver observer) {
            this.observer = FencedObserver.all(Objects.requireNonNull(observer, "observer"));
            return this;
        }

        public FencedExecutor build() {
            return new FencedExecutor(this);
        }
    }
}
