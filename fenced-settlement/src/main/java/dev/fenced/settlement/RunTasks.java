package dev.fenced.settlement;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A run's refunds on threads shared by every run of the process: a run hands each refund to
 * {@link #execute} and waits for its own with {@link #awaitAll}, whatever other runs do meanwhile.
 *
 * <p>Why shared: a run of 100 refunds with a pool of its own started 2 × concurrency threads and
 * let them end, and a fleet worker makes a run per merchant; starting those threads was about a
 * twelfth of a worker's CPU besides the JIT (BENCHMARKS.md, "CPU per refund"). The shared threads
 * are daemons, started when every one is busy and ended after a minute idle. How many of a run's
 * refunds run at once is the run's own to bound (its in-flight and confirm slots); this class
 * adds no limit of its own. Thread-safe.
 */
final class RunTasks {
    private static final AtomicLong THREADS = new AtomicLong();
    private static final ExecutorService SHARED = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "fenced-settle-" + THREADS.incrementAndGet());
        thread.setDaemon(true);
        return thread;
    });

    private final Object lock = new Object();
    private int running;

    /** Runs {@code task} on a shared thread; {@link #awaitAll} waits for it. */
    void execute(Runnable task) {
        synchronized (lock) {
            running++;
        }
        try {
            SHARED.execute(() -> {
                try {
                    task.run();
                } finally {
                    ended();
                }
            });
        } catch (RejectedExecutionException | OutOfMemoryError e) {
            ended();
            throw e;
        }
    }

    private void ended() {
        synchronized (lock) {
            if (--running == 0) {
                lock.notifyAll();
            }
        }
    }

    /**
     * Waits until every task handed to {@link #execute} has ended: in-flight refunds finish their
     * gateway call and confirm, they are not abandoned half-way. An interrupt ends the wait early,
     * with the thread's interrupt flag set again.
     */
    void awaitAll() {
        synchronized (lock) {
            while (running > 0) {
                try {
                    lock.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
