package dev.fenced.cli;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * A graceful stop on SIGTERM or SIGINT: the signal raises {@link #requested()} instead of ending
 * the JVM, so that the work it guards stops taking new work, confirms what is in flight, releases
 * its leases and returns, and the command exits with its own code. If that takes longer than
 * {@code limit}, the process exits with {@link #TOO_SLOW}. A SIGKILL skips all of it; the next
 * holder's lookup by key and the broker's redelivery cover that case.
 */
public final class Drain implements AutoCloseable {
    /** The exit code when the work did not end within the limit after the signal. */
    public static final int TOO_SLOW = 10;

    private final Duration limit;
    private final CountDownLatch done = new CountDownLatch(1);
    private final CountDownLatch signalled = new CountDownLatch(1);
    private final SignalHandler previousTerm;
    private final SignalHandler previousInt;
    private volatile boolean requested;

    private Drain(Duration limit) {
        this.limit = limit;
        this.previousTerm = Signal.handle(new Signal("TERM"), signal -> request());
        this.previousInt = Signal.handle(new Signal("INT"), signal -> request());
    }

    public static Drain onSignal(Duration limit) {
        return new Drain(limit);
    }

    public boolean requested() {
        return requested;
    }

    /** Waits for the signal (or {@link #request()}): how a command that serves until stopped waits. */
    public void awaitRequest() throws InterruptedException {
        signalled.await();
    }

    /** Also what a signal does; callable directly to drain for another reason. */
    public void request() {
        if (requested) {
            return;
        }
        requested = true;
        signalled.countDown();
        Thread deadline = new Thread(() -> {
            try {
                if (!done.await(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                    System.err.println("fenced: still draining after " + limit.toSeconds() + " s; exiting");
                    System.exit(TOO_SLOW);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "fenced-drain-deadline");
        deadline.setDaemon(true);
        deadline.start();
    }

    @Override
    public void close() {
        done.countDown();
        Signal.handle(new Signal("TERM"), previousTerm);
        Signal.handle(new Signal("INT"), previousInt);
    }
}
