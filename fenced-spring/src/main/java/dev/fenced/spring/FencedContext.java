package dev.fenced.spring;

import dev.fenced.Lease;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The lease of the {@link FencedLock} method running on this thread: its token is what the
 * method's own fenced writes carry ({@code FencedRows}, an idempotency key). Nested annotated
 * calls stack; each sees its own. Empty outside.
 */
public final class FencedContext {
    private static final ThreadLocal<Deque<Frame>> FRAMES = ThreadLocal.withInitial(ArrayDeque::new);

    private FencedContext() {
    }

    /** The innermost annotated method's lease on this thread, if one is running. */
    public static Optional<Lease> current() {
        Frame frame = FRAMES.get().peek();
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
        Frame frame = new Frame(lease, guard);
        FRAMES.get().push(frame);
        return frame;
    }

    static Frame innermost() {
        return FRAMES.get().peek();
    }

    static void pop(Frame frame) {
        Deque<Frame> frames = FRAMES.get();
        frames.remove(frame);
        if (frames.isEmpty()) {
            FRAMES.remove();
        }
    }

    /** One running annotated call: its lease, the guard its transactions enter (null for none), and a refusal met at a transaction's begin. */
    static final class Frame {
        final Lease lease;
        final SpringFencedTransactions guard;
        private RuntimeException refusedAtBegin;

        private Frame(Lease lease, SpringFencedTransactions guard) {
            this.lease = lease;
            this.guard = guard;
        }

        void refusedAtBegin(RuntimeException refusal) {
            if (refusedAtBegin == null) {
                refusedAtBegin = refusal;
            }
        }

        void throwIfRefusedAtBegin() {
            if (refusedAtBegin != null) {
                throw refusedAtBegin;
            }
        }
    }
}
