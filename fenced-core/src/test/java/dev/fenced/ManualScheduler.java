package dev.fenced;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/*
 * A copy of fenced-test-support's dev.fenced.testing.ManualScheduler: that module depends on this one, so
 * this module's tests cannot use it. Change both or neither.
 */
/**
 * A {@link ScheduledExecutorService} whose tasks run only when the test moves time, on the test's
 * own thread, in the spirit of db-scheduler's {@code ManualScheduler}: hand it to a
 * {@code LeaseWatchdog} or a {@code FencedExecutor} and renewals happen exactly when
 * {@link #advance} reaches them, never while the test looks.
 *
 * <p>{@link #advance} moves its {@link SettableClock} from one due task to the next, so a task sees
 * the clock at its own due time; a store on the same clock sees each renewal at the moment it was
 * due. Periodic tasks are scheduled again after each run (fixed rate from their due time, fixed
 * delay from the clock after the run). {@link #execute} and {@code submit} are due at once: they run
 * at the next {@link #runDueTasks} or {@link #advance}.
 *
 * <p>Does not: run anything on a thread of its own, nor run a task while another is running (a task
 * that advances the scheduler it runs on is refused). Thread-safe for scheduling and cancelling from
 * any thread; time moves only from the thread that calls {@link #advance}.
 */
final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {
    private final SettableClock clock;
    private final PriorityQueue<Task<?>> queue = new PriorityQueue<>();
    private final AtomicLong sequence = new AtomicLong();
    private boolean shutdown;
    private boolean running;

    /** A scheduler on a clock of its own, at {@link SettableClock#DEFAULT_START}. */
    public ManualScheduler() {
        this(new SettableClock());
    }

    /** A scheduler whose time is {@code clock}: give the same clock to what the tasks read time from. */
    public ManualScheduler(SettableClock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** The clock this scheduler moves. */
    public SettableClock clock() {
        return clock;
    }

    /**
     * Moves time forward by {@code duration}, running every task that falls due on the way, in due
     * order, each with the clock at its due time; leaves the clock at the end.
     *
     * @return how many tasks ran
     */
    public int advance(Duration duration) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException("time advances by zero or more, got " + duration);
        }
        Instant end = clock.instant().plus(duration);
        int ran = 0;
        for (Task<?> task = nextDue(end); task != null; task = nextDue(end)) {
            if (task.due.isAfter(clock.instant())) {
                clock.set(task.due);
            }
            runOne(task);
            ran++;
        }
        clock.set(end);
        return ran;
    }

    /** Runs the tasks due now (those handed to {@link #execute}, and any whose time has come) without moving the clock. */
    public int runDueTasks() {
        return advance(Duration.ZERO);
    }

    /** How many tasks wait, periodic ones included; cancelled ones are gone. */
    public synchronized int pendingTasks() {
        return queue.size();
    }

    private synchronized Task<?> nextDue(Instant end) {
        Task<?> head = queue.peek();
        if (head == null || head.due.isAfter(end)) {
            return null;
        }
        return queue.poll();
    }

    private void runOne(Task<?> task) {
        synchronized (this) {
            if (running) {
                throw new IllegalStateException("a task may not move the time of the scheduler it runs on");
            }
            running = true;
        }
        try {
            task.run();
        } finally {
            synchronized (this) {
                running = false;
                if (task.isPeriodic() && !task.isDone() && !shutdown) {
                    task.due = task.fixedRate ? task.due.plus(task.period) : clock.instant().plus(task.period);
                    queue.add(task);
                }
            }
        }
    }

    private synchronized <V> Task<V> enqueue(Task<V> task) {
        if (shutdown) {
            throw new RejectedExecutionException("the scheduler is shut down");
        }
        queue.add(task);
        return task;
    }

    private synchronized void remove(Task<?> task) {
        queue.remove(task);
    }

    private Instant dueIn(long delay, TimeUnit unit) {
        return clock.instant().plus(Duration.ofNanos(Math.max(0, unit.toNanos(delay))));
    }

    private static Duration period(long period, TimeUnit unit) {
        if (period <= 0) {
            throw new IllegalArgumentException("a period must be positive, got " + period + " " + unit);
        }
        return Duration.ofNanos(unit.toNanos(period));
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return enqueue(new Task<Void>(Executors.callable(command, null), dueIn(delay, unit), null, false));
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        return enqueue(new Task<>(callable, dueIn(delay, unit), null, false));
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return enqueue(new Task<Void>(Executors.callable(command, null), dueIn(initialDelay, unit), period(period, unit), true));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return enqueue(new Task<Void>(Executors.callable(command, null), dueIn(initialDelay, unit), period(delay, unit), false));
    }

    @Override
    public void execute(Runnable command) {
        schedule(command, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public synchronized void shutdown() {
        shutdown = true;
    }

    @Override
    public synchronized List<Runnable> shutdownNow() {
        shutdown = true;
        List<Runnable> pending = new ArrayList<>(queue);
        queue.clear();
        return pending;
    }

    @Override
    public synchronized boolean isShutdown() {
        return shutdown;
    }

    @Override
    public synchronized boolean isTerminated() {
        return shutdown && !running && queue.isEmpty();
    }

    /** Answers at once: nothing here runs unless the test runs it. */
    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return isTerminated();
    }

    /** A task with its due time on the scheduler's clock; ties run in the order they were scheduled. */
    private final class Task<V> extends FutureTask<V> implements RunnableScheduledFuture<V> {
        private final long order = sequence.getAndIncrement();
        private final Duration period;
        private final boolean fixedRate;
        private Instant due;

        Task(Callable<V> callable, Instant due, Duration period, boolean fixedRate) {
            super(callable);
            this.due = due;
            this.period = period;
            this.fixedRate = fixedRate;
        }

        @Override
        public boolean isPeriodic() {
            return period != null;
        }

        @Override
        public void run() {
            if (isPeriodic()) {
                runAndReset();
            } else {
                super.run();
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            remove(this);
            return cancelled;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(Duration.between(clock.instant(), due));
        }

        @Override
        public int compareTo(Delayed other) {
            if (other instanceof ManualScheduler.Task<?> task) {
                int byDue = due.compareTo(task.due);
                return byDue != 0 ? byDue : Long.compare(order, task.order);
            }
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
        }
    }
}
