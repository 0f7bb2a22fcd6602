package dev.fenced.bench;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * Waits for a condition, looking every interval until a deadline: the bench's waits on its workers
 * and its stream. Between two looks the caller's thread sleeps; the condition, not the time, ends
 * the wait, and the deadline bounds it.
 */
final class Poll {
    /** A condition that may read a server to answer. */
    @FunctionalInterface
    interface Condition {
        boolean met() throws Exception;
    }

    private Poll() {
    }

    /**
     * Returns once {@code condition} is met; the condition may throw to end the wait early (a worker died).
     *
     * @throws IllegalStateException with {@code timedOut}'s message when {@code timeout} passes first
     */
    static void until(Duration timeout, Duration interval, Condition condition, Supplier<String> timedOut) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.met()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(timedOut.get());
            }
            Thread.sleep(interval.toMillis());
        }
    }
}
