package dev.fenced.settlement;

import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;

/** The places a run has for refunds in flight, and for refunds waiting for their confirm. */
final class InFlightSlots {
    private InFlightSlots() {
    }

    /** One in-flight place, given back once however the refund ends. */
    static final class Slot {
        private final Semaphore slots;
        private final AtomicBoolean freed = new AtomicBoolean();

        Slot(Semaphore slots) {
            this.slots = slots;
        }

        void free() {
            if (freed.compareAndSet(false, true)) {
                slots.release();
            }
        }
    }

    /**
     * Hands a refund whose gateway call has answered from its in-flight slot to one of
     * {@code concurrency} places waiting for a confirm, so that the next refund can go out while
     * this one is written, and no more than that many confirms wait at once.
     */
    record ConfirmGate(Slot slot, Semaphore confirming) {
        void enter() {
            confirming.acquireUninterruptibly();
            slot.free();
        }

        void leave() {
            confirming.release();
        }
    }
}
