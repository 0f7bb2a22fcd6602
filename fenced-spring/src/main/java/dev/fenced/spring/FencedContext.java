package dev.fenced.spring;

import dev.fenced.Lease;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The lease of the {@link FencedLock} method running on this thread: its token is what the
 * method's own fenced writes carry ({@code FencedRows}, an idempotency key). Nested annotated
 * calls stack; each sees its own. Empty outside.
 */
public final class FencedContext {
    private static final ThreadLocal<Deque<Frame>> FRAMES = new ThreadLocal<>();

    private FencedContext() {
    }

    /** The innermost annotated method's lease on this thread, if one is running. */
    public static Optional<Lease> current() {
        Frame frame = innermost();
        return frame == null ? Optional.empty() : Optional.of(frame.lease);
    }

    /**
     * The innermost annotated method's token.
     *
     * @throws IllegalStateException outside a {@link FencedLock} method
     */
    public static long token() {
        return current().orElseThrow(() -> new IllegalStateException("no @FencedLock method runs on this thread")).token();
    }

    static Frame push(Lease lease, SpringFencedTransactions guard) {
        Deque<Frame> frames = FRAMES.get();
        if (frames == null) {
            frames = new ArrayDeque<>();
            FRAMES.set(frames);
        }
        Frame frame = new Frame(lease, guard);
        frames.push(frame);
        return frame;
    }

    /** The innermost frame, or null; reading creates nothing (every transaction's begin asks). */
    static Frame innermost() {
        Deque<Frame> frames = FRAMES.get();
        return frames == null ? null : frames.peek();
    }

    /** Whether a running annotated call on this thread holds the lease on {@code resource}. */
    static boolean holds(String resource) {
        Deque<Frame> frames = FRAMES.get();
        return frames != null && frames.stream().anyMatch(frame -> frame.lease.resource().equals(resource));
    }

    static void pop(Frame frame) {
        Deque<Frame> frames = FRAMES.get();
        frames.remove(frame);
        if (frames.isEmpty()) {
            FRAMES.remove();
        }
    }

    /**
     * One running annotated call: its lease, the guard its transactions enter (null for none), how
     * many of its guarded transactions are still open, and a refusal met at a transaction's begin.
     */
    static final class Frame {
        final Lease lease;
        final SpringFencedTransactions guard;
        private int openGuarded;
        private RuntimeException refusedAtBegin;

        private Frame(Lease lease, SpringFencedTransactions guard) {
            this.lease = lease;
            this.guard = guard;
        }

        /**
         * Whether the transaction now beginning, or active, must enter the guard: one on the guard's
         * DataSource that writes, while none of this call's guarded transactions is still open. An open
         * one (suspended by a REQUIRES_NEW) holds the guard's row lock with this token: no newer holder
         * can enter before it ends, and entering again from a second connection would wait for that lock
         * on this very thread forever.
         */
        boolean mustEnter(boolean readOnly) {
            return guard != null && !readOnly && openGuarded == 0 && guard.isBoundToTransaction();
        }

        /** Enters the guard for the current transaction and counts it open until it completes. */
        void enter() {
            guard.enter(lease.resource(), lease.token());
            if (!TransactionSynchronizationManager.isSynchronizationActive()) {
                return; // a manager without synchronization: its end cannot be heard, so it is not counted open
            }
            openGuarded++;
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCompletion(int status) {
                    openGuarded--;
                }
            });
        }

        void refusedAtBegin(RuntimeException refusal) {
            if (refusedAtBegin == null) {
                refusedAtBegin = refusal;
            }
        }

        /** The refusal met at a transaction's begin, if any, with what the method threw after it suppressed. */
        RuntimeException refusalAtBegin(Throwable thrownAfter) {
            if (refusedAtBegin != null && thrownAfter != null && thrownAfter != refusedAtBegin) {
                refusedAtBegin.addSuppressed(thrownAfter);
            }
            return refusedAtBegin;
        }
    }
}
