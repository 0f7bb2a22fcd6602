package dev.fenced.settlement;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A run's tasks on threads shared by every run of the process: a run hands each task to
 * {@link #execute} and waits for its own with {@link #awaitAll}, whatever other runs do meanwhile.
 *
 * <p>Why shared: a run of 100 refunds with a pool of its own started 2 × concurrency threads and
 * let them end, and a fleet worker makes a run per merchant; starting those threads was about a
 * twelfth of a worker's CPU besides the JIT (BENCHMARKS.md, "CPU per refund"). The shared threads
 * are daemons, started when every one is busy and ended after a minute idle; they carry no
 * caller's context class loader or inheritable thread-locals. A run keeps at most {@code limit}
 * of its tasks alive at once, as its own pool of that many threads did: {@link #execute} waits for
 * one of them to end. Thread-safe.
 */
final class RunTasks {
    private static final AtomicLong THREADS = new AtomicLong();
    private static final ExecutorService SHARED = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(null, runnable, "fenced-settle-" + THREADS.incrementAndGet(), 0, false);
        thread.setContextClassLoader(RunTasks.class.getClassLoader());
        thread.setDaemon(true);
        return thread;
    });

    /** Tasks handed to the shared threads by every run of the process, for the tests that count hand-overs. */
    private static final AtomicLong HANDED_OVER = new AtomicLong();

    private final int limit;
    /** A permit per task that may be alive: all of them free again means every task has ended. */
    private final Semaphore alive;

    /** A run's tasks, at most {@code limit} alive at once. */
    RunTasks(int limit) {
        this.limit = limit;
        this.alive = new Semaphore(limit);
    }

    /** Runs {@code task} on a shared thread, once fewer than the limit of this run's tasks are alive; {@link #awaitAll} waits for it. */
    void execute(Runnable task) {
        alive.acquireUninterruptibly();
        HANDED_OVER.incrementAndGet();
        AtomicBoolean ended = new AtomicBoolean();
        try {
            SHARED.execute(() -> {
                try {
                    task.run();
                } finally {
                    ended(ended);
                }
            });
        } catch (Throwable e) {
            ended(ended); // not handed over (no thread could be started): nothing will end it
            throw e;
        }
    }

    /** Tasks handed over by every run of the process so far. */
    static long handedOver() {
        return HANDED_OVER.get();
    }

    /** Counts a task out once, whichever of its thread and a failed hand-over gets here first. */
    private void ended(AtomicBoolean ended) {
        if (ended.compareAndSet(false, true)) {
            alive.release();
        }
    }

    /**
     * Waits until every task handed to {@link #execute} has ended: in-flight refunds finish their
     * gateway call and confirm, they are not abandoned half-way. An interrupt ends the wait early:
     * false, with the thread's interrupt flag set again.
     */
    boolean awaitAll() {
        try {
            alive.acquire(limit);
            alive.release(limit);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** As {@link #awaitAll}, but an interrupt does not end the wait; the flag stays as it was. */
    void awaitAllUninterruptibly() {
        alive.acquireUninterruptibly(limit);
        alive.release(limit);
    }
}
