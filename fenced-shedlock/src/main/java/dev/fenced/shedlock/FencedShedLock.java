package dev.fenced.shedlock;

import dev.fenced.Lease;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The lease of the ShedLock task running on this thread, for its fenced writes:
 * {@code FencedShedLock.token()} inside a {@code @SchedulerLock} method or a
 * {@code LockingTaskExecutor} task whose provider is a {@link FencedLockProvider}. ShedLock takes
 * the lock, runs the task and unlocks on one thread; a lock is bound to the thread that took it
 * until it is unlocked, so code that calls {@code lock()} itself must unlock on that thread too.
 * Nested locks stack; each task sees the innermost, also after its extension failed (its token is
 * then refused once a newer holder entered; an enclosing lock's token is never handed out instead).
 */
public final class FencedShedLock {
    private static final ThreadLocal<Deque<FencedSimpleLock.Binding>> BOUND = new ThreadLocal<>();

    private FencedShedLock() {
    }

    /** The innermost live lock's lease on this thread, if a task under a fenced lock runs here. */
    public static Optional<Lease> current() {
        Deque<FencedSimpleLock.Binding> bound = BOUND.get();
        if (bound == null) {
            return Optional.empty();
        }
        // Unlocked (perhaps from another thread) or found gone: dropped here, on the thread that bound it.
        bound.removeIf(FencedSimpleLock.Binding::finished);
        if (bound.isEmpty()) {
            BOUND.remove();
            return Optional.empty();
        }
        return Optional.of(bound.peek().lease);
    }

    /**
     * The innermost live lock's token.
     *
     * @throws IllegalStateException when no task under a {@link FencedLockProvider} lock runs on this thread
     */
    public static long token() {
        return current().orElseThrow(() -> new IllegalStateException(
                "no task under a FencedLockProvider lock runs on this thread")).token();
    }

    static void bind(FencedSimpleLock.Binding binding) {
        Deque<FencedSimpleLock.Binding> bound = BOUND.get();
        if (bound == null) {
            bound = new ArrayDeque<>();
            BOUND.set(bound);
        } else {
            bound.removeIf(FencedSimpleLock.Binding::finished);
        }
        bound.push(binding);
    }

    /** Drops a finished lock from this thread, when this thread holds it (ShedLock unlocks where it locked). */
    static void unbind(FencedSimpleLock.Binding binding) {
        Deque<FencedSimpleLock.Binding> bound = BOUND.get();
        if (bound != null) {
            bound.remove(binding);
            if (bound.isEmpty()) {
                BOUND.remove();
            }
        }
    }
}
