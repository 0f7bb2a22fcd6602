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
 * 22 s left}. {@link #off()} prints nothing ({@code --quiet}).
 */
abstract class Progress implements AutoCloseable {

    /** Counts one more unit done. Thread-safe. */
    abstract void step();

    @Override
    public abstract void close();

    static Progress off() {
        return new Progress() {
            @Override
            void step() {
            }

            @Override
            public void close() {
            }
        };
    }

    /** A bar on a terminal, periodic lines every {@code interval} elsewhere. */
    static Progress of(String task, long total, String unit, Duration interval) {
        return System.console() != null ? new Bar(task, total, unit) : new Lines(task, total, unit, interval, System.err);
    }

    private static final class Bar extends Progress {
        private final ProgressBar bar;

        Bar(String task, long total, String unit) {
            bar = new ProgressBarBuilder().setTaskName(task).setInitialMax(total).setUnit(" " + unit, 1)
                    .setStyle(ProgressBarStyle.ASCII).showSpeed().setConsumer(new ConsoleProgressBarConsumer(System.err)).build();
        }

        @Override
        void step() {
            bar.step();
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
        void step() {
            done.incrementAndGet();
        }

        private void print() {
            out.println(line(done.get(), (System.nanoTime() - startedNanos) / 1e9));
        }

        String line(long now, double seconds) {
            double rate = seconds > 0 ? now / seconds : 0;
            String left = rate > 0 && now < total ? String.format(Locale.ROOT, ", about %d s left", Math.round((total - now) / rate)) : "";
            return String.format(Locale.ROOT, "%s: %d/%d %s (%d %%), %.1f/s%s", task, now, total, unit,
                    total == 0 ? 100 : now * 100 / total, rate, left);
        }

        @Override
        public void close() {
            ticker.shutdownNow();
        }
    }
}
