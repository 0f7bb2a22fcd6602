package dev.fenced.settlement;

import dev.fenced.FencedException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;

/**
 * Confirms from many threads, written together (group commit): a thread that finds no write
 * running writes every confirm waiting, in one call of {@link BatchWrite}, while the others wait
 * for their answer: each is woken by its own answer or to write the next batch, never by a batch
 * it is not in. Each caller learns its own row's refusal, or the batch's failure. With one
 * caller at a time a batch is that one confirm; a batcher built to gather has its writer wait a
 * bounded time for more first. Thread-safe; knows nothing of databases, so it is tested alone.
 *
 * @param <K> what names a confirm: a refund id within one run, a run and a refund id across runs.
 *     Two callers with equal keys at once would lose one of them: keys must be unique among the
 *     confirms in flight.
 */
final class ConfirmBatcher<K> {
    /** Writes a batch: gateway reference by key in, refusal by key out (absent: written). */
    @FunctionalInterface
    interface BatchWrite<K> {
        Map<K, FencedException> write(Map<K, String> gatewayReferenceByKey) throws SQLException;
    }

    /** One confirm waiting in a batch, and its answer once written. */
    private static final class PendingConfirm {
        static final int WAITING = 0;
        static final int WRITTEN = 1;
        static final int WRITES_NEXT = 2;

        final String gatewayReference;
        final Thread caller = Thread.currentThread();
        FencedException refusal;
        Throwable failure;
        /** Set under the batcher's lock, read by its caller without it: the answer's fields are written first. */
        volatile int turn = WAITING;

        PendingConfirm(String gatewayReference) {
            this.gatewayReference = gatewayReference;
        }

        void finish(FencedException refusal, Throwable failure) {
            this.refusal = refusal;
            this.failure = failure;
            this.turn = WRITTEN;
        }

        Optional<FencedException> result() throws SQLException {
            if (failure instanceof SQLException e) {
                throw e;
            }
            if (failure instanceof RuntimeException e) {
                throw e;
            }
            if (failure != null) {
                throw new IllegalStateException("the confirm batch failed: " + failure, failure);
            }
            return Optional.ofNullable(refusal);
        }
    }

    private final BatchWrite<K> write;
    private final long gatherNanos;
    private final IntSupplier places;
    private final Object lock = new Object();
    private Map<K, PendingConfirm> waiting = new LinkedHashMap<>();
    private boolean writing;
    private boolean gathering;

    /** A batcher that writes what waits at once: a batch is what arrived while the last one was written. */
    ConfirmBatcher(BatchWrite<K> write) {
        this(write, Duration.ZERO, () -> 1);
    }

    /**
     * A batcher whose writer first waits up to {@code gather} for more confirms, or until as many
     * wait as {@code places} holds (the confirms that can wait at once, read on every arrival; one
     * or less: no gather): fewer, larger batches, each a commit, for at most {@code gather} more per
     * confirm. A writer never waits for confirms that cannot come: once every place waits, it writes.
     */
    ConfirmBatcher(BatchWrite<K> write, Duration gather, IntSupplier places) {
        if (gather.isNegative()) {
            throw new IllegalArgumentException("gather must be at least zero, got " + gather);
        }
        this.write = write;
        this.gatherNanos = gather.toNanos();
        this.places = places;
    }

    /**
     * Blocks until the confirm is written; says why it was refused, if it was.
     *
     * @throws IllegalStateException when a confirm with an equal key is waiting already
     */
    Optional<FencedException> confirm(K key, String gatewayReference) throws SQLException {
        PendingConfirm mine = new PendingConfirm(gatewayReference);
        boolean writesFirst;
        synchronized (lock) {
            if (waiting.putIfAbsent(key, mine) != null) {
                // replacing it would leave its caller waiting for an answer no batch gives
                throw new IllegalStateException("a confirm of " + key + " is already waiting");
            }
            if (gathering && waiting.size() >= places.getAsInt()) {
                lock.notifyAll(); // a writer gathering may write now: the only thread that waits on the lock
            }
            writesFirst = !writing;
            writing = true;
        }
        if (!writesFirst && awaitTurn(mine) == PendingConfirm.WRITTEN) {
            return mine.result();
        }
        Map<K, PendingConfirm> batch = null;
        Map<K, FencedException> refusals = Map.of();
        Throwable failure = null;
        try {
            // Taken inside the try: an Error on the way to the write (out of memory while gathering) must
            // still answer the batch and give up the turn, or every later confirm waits for a writer that is gone.
            Map<K, PendingConfirm> arriving = new LinkedHashMap<>();
            synchronized (lock) {
                if (gatherNanos > 0 && !gather()) {
                    Thread.currentThread().interrupt(); // the batch is written at once, not abandoned
                }
                batch = waiting;
                waiting = arriving;
            }
            Map<K, String> references = new LinkedHashMap<>();
            batch.forEach((id, pending) -> references.put(id, pending.gatewayReference));
            refusals = Objects.requireNonNull(write.write(references), "the batch write answered null"); // a failure, not a hang
        } catch (Throwable e) {
            failure = e;
        } finally {
            if (batch == null) {
                failWaiting(failure, mine);
            } else {
                answerAndHandOn(batch, refusals, failure, mine);
            }
        }
        return mine.result();
    }

    /** Answers a written (or failed) batch and hands the writer's turn on. */
    private void answerAndHandOn(Map<K, PendingConfirm> batch, Map<K, FencedException> refusals, Throwable failure, PendingConfirm mine) {
        PendingConfirm next = null;
        synchronized (lock) {
            for (Map.Entry<K, PendingConfirm> entry : batch.entrySet()) {
                entry.getValue().finish(refusals.get(entry.getKey()), failure);
            }
            // The writer's turn goes to the first confirm that came during this write, and to no other: the others
            // wait on for their batch. Waking them all would cost each a wake-up per batch, on a contended lock.
            Iterator<PendingConfirm> arrived = waiting.values().iterator();
            if (arrived.hasNext()) {
                next = arrived.next();
                next.turn = PendingConfirm.WRITES_NEXT;
            } else {
                writing = false;
            }
        }
        for (PendingConfirm written : batch.values()) {
            if (written != mine) {
                LockSupport.unpark(written.caller);
            }
        }
        if (next != null) {
            LockSupport.unpark(next.caller);
        }
    }

    /**
     * The batch was never taken (an Error on the way to the write): what waits, the writer's own
     * confirm among it, fails with that Error, and the turn is free. No new map: the Error may be
     * the heap running out.
     */
    private void failWaiting(Throwable failure, PendingConfirm mine) {
        synchronized (lock) {
            for (PendingConfirm pending : waiting.values()) {
                pending.finish(null, failure);
                if (pending != mine) {
                    LockSupport.unpark(pending.caller);
                }
            }
            waiting.clear();
            writing = false;
        }
    }

    /**
     * Parks until the confirm is written or its caller is to write the next batch; an interrupt is
     * kept for the caller and does not end the wait: a confirm is not abandoned half-way.
     */
    private static int awaitTurn(PendingConfirm mine) {
        boolean interrupted = false;
        int turn;
        while ((turn = mine.turn) == PendingConfirm.WAITING) {
            LockSupport.park(mine);
            interrupted |= Thread.interrupted();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return turn;
    }

    /** Waits, holding the writer's turn, until as many confirms wait as can or the gather is over; false when interrupted. */
    private boolean gather() {
        long deadline = System.nanoTime() + gatherNanos;
        long left;
        gathering = true;
        try {
            while (waiting.size() < places.getAsInt() && (left = deadline - System.nanoTime()) > 0) {
                lock.wait(left / 1_000_000, (int) (left % 1_000_000));
            }
            return true;
        } catch (InterruptedException e) {
            return false;
        } finally {
            gathering = false;
        }
    }
}
