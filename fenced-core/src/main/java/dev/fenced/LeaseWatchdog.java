package dev.fenced;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Renews a lease in the background at a fraction of its TTL, and tells a listener once when a
 * renewal finds the lease gone or fails; it then stops. A worker uses the listener to stop
 * claiming rows.
 *
 * <p>Renewal keeps a live worker's lease. It does <em>not</em> make writes safe: a paused process
 * cannot renew, and when it resumes it writes before its watchdog has noticed anything. Only the
 * fencing token checked by the database refuses that write.
 *
 * <p>Thread-safe. {@link #close()} stops renewing; it does not release the lease.
 */
public final class LeaseWatchdog implements AutoCloseable {
    private final Lease lease;
    private final Duration ttl;
    private final LeaseLostListener listener;
    private final ScheduledExecutorService scheduler;
    private final ScheduledFuture<?> task;
    private final AtomicBoolean lost = new AtomicBoolean();

    private LeaseWatchdog(Lease lease, Duration ttl, double fraction, LeaseLostListener listener) {
        this.lease = Objects.requireNonNull(lease, "lease");
        this.ttl = LeaseArguments.requireValidTtl(ttl);
        this.listener = Objects.requireNonNull(listener, "listener");
        if (!(fraction > 0 && fraction < 1)) {
            throw new IllegalArgumentException("renewal fraction must be between 0 and 1 exclusive, got " + fraction);
        }
        long periodMillis = Math.max(1, (long) (ttl.toMillis() * fraction));
        this.scheduler = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "fenced-watchdog-" + lease.resource());
            thread.setDaemon(true);
            return thread;
        });
        this.task = scheduler.scheduleWithFixedDelay(this::renewOnce, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    /** Starts renewing {@code lease} to {@code ttl} every third of the TTL. */
    public static LeaseWatchdog start(Lease lease, Duration ttl, LeaseLostListener listener) {
        return new LeaseWatchdog(lease, ttl, 1.0 / 3, listener);
    }

    /** Starts renewing {@code lease} to {@code ttl} every {@code fraction} of the TTL. */
    public static LeaseWatchdog start(Lease lease, Duration ttl, double fraction, LeaseLostListener listener) {
        return new LeaseWatchdog(lease, ttl, fraction, listener);
    }

    /** True once a renewal found the lease gone or failed. A false answer proves nothing. */
    public boolean isLeaseLost() {
        return lost.get();
    }

    private void renewOnce() {
        Throwable cause = null;
        boolean renewed;
        try {
            renewed = lease.renew(ttl);
        } catch (RuntimeException e) {
            renewed = false;
            cause = e;
        }
        if (!renewed && lost.compareAndSet(false, true)) {
            task.cancel(false);
            scheduler.shutdown();
            listener.onLeaseLost(lease, cause);
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
