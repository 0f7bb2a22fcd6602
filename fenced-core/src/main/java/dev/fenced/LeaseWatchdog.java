package dev.fenced;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * Renews a lease in the background at a fraction of its TTL, and tells a listener once when a
 * renewal finds the lease gone, or when renewals have failed until the TTL since the last one that
 * succeeded (or since the watchdog started) has run out; it then stops. A failed renewal (a timeout
 * during a failover) is retried at the next interval while the lease may still be live, by the
 * watchdog's clock. A worker uses the listener to stop claiming rows.
 *
 * <p>Renewal keeps a live worker's lease. It does <em>not</em> make writes safe: a paused process
 * cannot renew, and when it resumes it writes before its watchdog has noticed anything. Only the
 * fencing token checked by the database refuses that write.
 *
 * <p>Watchdogs share a few daemon threads (one scheduler for the process, or one the caller
 * passes), so that a process holding thousands of renewed leases does not hold a thread for each.
 * A renewal is one blocking command: a store that hangs delays the other renewals on the same
 * thread by up to its command timeout (the default TTL fraction leaves two renewals of slack).
 * Leases on stores that must not delay each other's renewals take a scheduler each.
 *
 * <p>Thread-safe. {@link #close()} stops renewing; it does not release the lease.
 */
public final class LeaseWatchdog implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(LeaseWatchdog.class.getName());
    private final Lease lease;
    private final Duration ttl;
    private final LeaseLostListener listener;
    private final ScheduledFuture<?> task;
    private final AtomicBoolean lost = new AtomicBoolean();
    private final LongSupplier millis;
    /** When the last renewal that succeeded was sent (the start, before the first): the lease lives a TTL from then at least. */
    private volatile long renewedAtMillis;
    private volatile boolean closed;

    private LeaseWatchdog(Lease lease, Duration ttl, double fraction, LeaseLostListener listener,
                          ScheduledExecutorService scheduler, LongSupplier millis) {
        this.lease = Objects.requireNonNull(lease, "lease");
        this.ttl = LeaseArguments.requireValidTtl(ttl);
        this.listener = Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(scheduler, "scheduler");
        if (!(fraction > 0 && fraction < 1)) {
            throw new IllegalArgumentException("renewal fraction must be between 0 and 1 exclusive, got " + fraction);
        }
        this.millis = millis;
        this.renewedAtMillis = millis.getAsLong();
        long periodMillis = Math.max(1, (long) (ttl.toMillis() * fraction));
        this.task = scheduler.scheduleWithFixedDelay(this::renewOnce, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    /** The process's watchdog threads: daemons, as many as cores (at least two), created on first use. */
    private static final class SharedScheduler {
        static final ScheduledExecutorService INSTANCE = create();

        private static ScheduledExecutorService create() {
            AtomicInteger count = new AtomicInteger();
            ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(
                    Math.max(2, Runtime.getRuntime().availableProcessors()), runnable -> {
                        Thread thread = new Thread(runnable, "fenced-watchdog-" + count.incrementAndGet());
                        thread.setDaemon(true);
                        return thread;
                    });
            executor.setRemoveOnCancelPolicy(true); // a closed watchdog leaves nothing queued behind
            return executor;
        }
    }

    /**
     * The process's shared watchdog threads: the default scheduler of {@link FencedExecutor}. Not
     * public: a caller that wants renewals elsewhere passes its own scheduler to {@code start}.
     */
    static ScheduledExecutorService sharedScheduler() {
        return SharedScheduler.INSTANCE;
    }

    /** Starts renewing {@code lease} to {@code ttl} every third of the TTL, on the shared threads. */
    public static LeaseWatchdog start(Lease lease, Duration ttl, LeaseLostListener listener) {
        return start(lease, ttl, 1.0 / 3, listener);
    }

    /** Starts renewing {@code lease} to {@code ttl} every {@code fraction} of the TTL, on the shared threads. */
    public static LeaseWatchdog start(Lease lease, Duration ttl, double fraction, LeaseLostListener listener) {
        return start(lease, ttl, fraction, listener, SharedScheduler.INSTANCE);
    }

    /**
     * Starts renewing on the caller's scheduler, which the watchdog never shuts down. A scheduler
     * with one thread renews every lease in turn.
     */
    public static LeaseWatchdog start(Lease lease, Duration ttl, double fraction, LeaseLostListener listener,
                                      ScheduledExecutorService scheduler) {
        // Monotonic: a step of the wall clock must neither end the retries early nor stretch them past the TTL.
        return new LeaseWatchdog(lease, ttl, fraction, listener, scheduler, () -> System.nanoTime() / 1_000_000);
    }

    /**
     * As {@link #start(Lease, Duration, double, LeaseLostListener, ScheduledExecutorService)}, with
     * the clock that tells when the TTL since the last renewal has run out (for tests that move time).
     */
    public static LeaseWatchdog start(Lease lease, Duration ttl, double fraction, LeaseLostListener listener,
                                      ScheduledExecutorService scheduler, Clock clock) {
        Objects.requireNonNull(clock, "clock");
        return new LeaseWatchdog(lease, ttl, fraction, listener, scheduler, clock::millis);
    }

    /** True once a renewal found the lease gone, or renewals failed until its TTL ran out. A false answer proves nothing. */
    public boolean isLeaseLost() {
        return lost.get();
    }

    private void renewOnce() {
        if (closed || lost.get()) {
            return; // cancelled, or lost before the constructor had stored the task to cancel
        }
        long sentAt = millis.getAsLong();
        Throwable cause = null;
        boolean renewed;
        try {
            renewed = lease.renew(ttl);
        } catch (RuntimeException e) {
            renewed = false;
            cause = e;
        }
        if (renewed) {
            renewedAtMillis = sentAt;
            return;
        }
        long left = renewedAtMillis + ttl.toMillis() - millis.getAsLong();
        if (cause != null && left > 0 && !closed) {
            // The store did not answer, which is not "gone": the lease may live until its TTL runs
            // out, and a failover or a slow command is often over well before that.
            LOG.log(System.Logger.Level.WARNING, "renewal of {0} with token {1} failed, retrying while its TTL may last ({2} ms): {3}",
                    lease.resource(), lease.token(), left, cause.getMessage());
            return;
        }
        // A renewal that was running when close() was called says nothing: the lease may have
        // been released since.
        if (!closed && lost.compareAndSet(false, true)) {
            if (task != null) {
                task.cancel(false);
            }
            // The core has no logging dependency: the JDK's platform logger, which SLF4J and
            // Spring Boot route to the application's logging.
            LOG.log(System.Logger.Level.WARNING, "lease lost: {0} with token {1}: {2}", lease.resource(), lease.token(),
                    cause == null ? "it expired or another holder has it" : "renewals failed until its TTL ran out: " + cause.getMessage());
            listener.onLeaseLost(lease, cause);
        }
    }

    /** Stops renewing; a renewal already running finishes, and the listener is not told after this. */
    @Override
    public void close() {
        closed = true;
        task.cancel(false);
    }
}
