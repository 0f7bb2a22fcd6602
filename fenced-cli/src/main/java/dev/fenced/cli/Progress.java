package dev.fenced.cli;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * How far a long command has come, on stderr, never on stdout (which may carry JSON or event
 * lines): on a terminal a progress bar with rate and time left (me.tongfei:progressbar); otherwise
 * one line at a steady interval, e.g. {@code settle m_4471: 312/1200 refunds (26 %), 41.0/s, about
 * 22 s left}, and a last line when it ends if it printed any. {@link #off()} prints nothing
 * ({@code --quiet}). Used by every long command: settle, seed, reconcile, compare, chaos and the
 * benchmarks.
 */
public abstract class Progress implements AutoCloseable {
    /** How often lines are printed when stderr is not a terminal. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(5);

    Progress() {
    }

    /** Counts one more unit done. Thread-safe. */
    public void step() {
        stepBy(1);
    }

    /** Counts {@code units} more done. Thread-safe. */
    public abstract void stepBy(long units);

    @Override
    public abstract void close();

    public static Progress off() {
        return new Progress() {
            @Override
            public void stepBy(long units) {
            }

            @Override
            public void close() {
            }
        };
    }

    /** A bar on a terminal, periodic lines every {@code interval} elsewhere. */
    public static Progress of(String task, long total, String unit, Duration interval) {
        return System.console() != null ? new Bar(task, total, unit) : new Lines(task, total, unit, interval, System.err);
    }

    /** Periodic lines on {@code out}, terminal or not: for tests and for callers with a stream of their own. */
    public static Progress lines(String task, long total, String unit, Duration interval, PrintStream out) {
        return new Lines(task, total, unit, interval, out);
    }

    private static final class Bar extends Progress {
        private final ProgressBar bar;

        Bar(String task, long total, String unit) {
            bar = new ProgressBarBuilder().setTaskName(task).setInitialMax(total).setUnit(" " + unit, 1)
                    .setStyle(ProgressBarStyle.ASCII).showSpeed().setConsumer(new ConsoleProgressBarConsumer(System.err)).build();
        }

        @Override
        public void stepBy(long units) {
            bar.stepBy(units);
        }

        @Override
        public void close() {
            bar.close();
        }
    }

    static final class Lines extends Progress {
        private final String task;
        private final long total;
        private final String unit;
        private final PrintStream out;
        private final AtomicLong done = new AtomicLong();
        private final long startedNanos = System.nanoTime();
        private final ScheduledExecutorService ticker;
        private volatile boolean printed;

        Lines(String task, long total, String unit, Duration interval, PrintStream out) {
            this.task = task;
            this.total = total;
            this.unit = unit;
            this.out = out;
            this.ticker = Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "progress");
                thread.setDaemon(true);
                return thread;
            });
            ticker.scheduleAtFixedRate(this::print, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        }

        @Override
        public void stepBy(long units) {
            done.addAndGet(units);
        }

        private void print() {
            printed = true;
            out.println(line(done.get(), (System.nanoTime() - startedNanos) / 1e9));
        }

        String line(long counted, double seconds) {
            long now = Math.min(counted, total); // a count may overshoot (a refund confirmed twice): the line never says 104 %
            double rate = seconds > 0 ? now / seconds : 0;
            String left = rate > 0 && now < total ? String.format(Locale.ROOT, ", about %d s left", Math.round((total - now) / rate)) : "";
            return String.format(Locale.ROOT, "%s: %d/%d %s (%d %%), %.1f/s%s", task, now, total, unit,
                    total == 0 ? 100 : now * 100 / total, rate, left);
        }

        @Override
        public void close() {
            ticker.shutdown(); // a line being printed finishes before the last one
            try {
                ticker.awaitTermination(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (printed) {
                out.println(String.format(Locale.ROOT, "%s: %d/%d %s in %.1f s", task, Math.min(done.get(), total), total, unit,
                        (System.nanoTime() - startedNanos) / 1e9));
            }
        }
    }
}
