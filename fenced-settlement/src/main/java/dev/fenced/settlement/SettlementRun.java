package dev.fenced.settlement;

import dev.fenced.FenceViolation;
import dev.fenced.Lease;
import dev.fenced.provider.MinorUnits;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * One settlement run: reads a merchant's unsettled rows, claims them, settles each with
 * {@link RefundSteps} on {@code concurrency} places in flight (tasks that take the rows in order),
 * puts back what it claimed but never sent when it stops early, and appends the journal. It is
 * given its lease, its {@link RunSettings} and a {@link RunReporter}, and knows nothing of the
 * worker that started it. Lives as long as one {@link SettlementWorker#settle} call; not reused.
 */
final class SettlementRun {
    private final Lease lease;
    private final RunSettings settings;
    private final RunState state;
    private final RunWrites writes;
    private final RefundSteps steps;
    /** Where the run's confirms are written with other runs' (the process's shared committer, or one of its own); null with one in flight. */
    private final SharedConfirms confirms;
    /** True when {@link #confirms} is the run's own, ended with the run. */
    private final boolean ownConfirms;
    /** The settling thread was interrupted: a stop. */
    private final AtomicBoolean interrupted = new AtomicBoolean();

    SettlementRun(Lease lease, RunSettings settings, RunReporter report, AtomicBoolean leaseLost, BooleanSupplier stopRequested) {
        this.lease = lease;
        this.settings = settings;
        this.state = new RunState(lease, settings, report, leaseLost, () -> interrupted.get() || stopRequested.getAsBoolean());
        this.writes = new RunWrites(settings.dataSource(), settings.writes(), lease.token(), settings.hook());
        GatewayCalls calls = new GatewayCalls(settings.gateway(), settings.gatewayAttempts(), settings.gatewayBackoff(), state::stopped,
                settings.keyRetention());
        // With refunds in parallel, the confirms join those of the process's other runs on the same data source, written
        // by one committer thread: a thread that reads a socket keeps the JDK's per-thread socket-buffer cache (a
        // 1,024-slot array, about 4 KiB of heap), and when any of a run's threads could lead a batch that was about 8 KiB
        // per refund in flight (BENCHMARKS.md, Fleet). Writes whose batches have no bound of their own get a committer of
        // the run's own. With one in flight the run writes its own: no hop.
        RefundSteps.Confirmations confirmations;
        if (settings.pipelined()) {
            boolean shared = settings.writes().boundsConfirmEach();
            SharedConfirms committer = shared ? SharedConfirms.of(settings.dataSource(), settings.writes())
                    : new SharedConfirms(SharedConfirms.TOGETHER_WAIT);
            this.confirms = committer;
            this.ownConfirms = !shared;
            confirmations = (refundId, gatewayReference) -> committer.confirm(writes, refundId, gatewayReference);
        } else {
            this.confirms = null;
            this.ownConfirms = false;
            confirmations = new ConfirmBatcher<String>(writes::writeConfirms)::confirm;
        }
        this.steps = new RefundSteps(state, writes, calls, confirmations, settings.hook(), settings.keyRetention());
    }

    /**
     * Settles the merchant's rows; never throws for a refusal, which is recorded. A failure to read
     * the rows at the start is the caller's to record ({@link #failedToRead}). An interrupt of the
     * calling thread is a stop: no row is taken after it, and the refunds in flight finish; the
     * flag is cleared, for the caller to set again once it is done ({@link #interrupted()}).
     */
    void settle(String merchant) throws SQLException {
        List<RefundRow> rows = RefundRow.unsettled(settings.dataSource(), merchant, settings.keyRetention().clock());
        state.read(rows.size());
        rows = sendable(rows);
        // With more than one in flight, a refund's slot is freed once its gateway call has
        // answered (its confirm then waits in the group commit on its own thread), and the next
        // rows are claimed while the current ones are in flight: neither database round trip
        // holds up the next gateway call. With one in flight every step waits for the last.
        boolean pipelined = settings.pipelined();
        // Each task takes the next row itself, as many tasks as a run has refunds in flight and waiting
        // for confirms: one hand-over to a shared thread per task, not one per refund, and no loop
        // waking up for every free place (BENCHMARKS.md, "CPU per refund: tasks that take their rows").
        int pullers = Math.min(pipelined ? 2 * settings.concurrency() : 1, rows.size());
        RunTasks tasks = new RunTasks(Math.max(1, pullers));
        RowCursor cursor = new RowCursor(rows);
        Semaphore inFlight = new Semaphore(settings.concurrency());
        Semaphore confirming = new Semaphore(settings.concurrency());
        if (confirms != null) {
            confirms.runStarted(settings.concurrency());
        }
        try {
            for (int i = 0; i < pullers; i++) {
                tasks.execute(() -> pull(merchant, cursor, inFlight, pipelined ? confirming : null));
            }
        } catch (RuntimeException e) {
            // No thread for a task (the pool rejected it): the tasks started stop, and what they claimed goes back.
            state.failedWith(merchant, e);
        } finally {
            if (!tasks.awaitAll()) {
                // A stop: the tasks take no more rows and end with their refunds. The flag stays down until the worker
                // has released the lease: a blocking call on an interrupted thread (Lettuce's, the pool's) gives up.
                interrupted.set(true);
                Thread.interrupted();
                tasks.awaitAllUninterruptibly();
            }
            if (confirms != null) {
                confirms.runEnded(settings.concurrency());
            }
            if (ownConfirms) {
                confirms.shutdown();
            }
        }
        putBackClaimedAhead(cursor.claimedAhead());
        if (settings.journal() != null && !state.violated()) {
            journal(merchant);
        }
    }

    /**
     * One task of the run: takes the next row, waits for a place in flight, settles it, and again,
     * until the rows run out or the run stops. {@code confirming} is null with one in flight.
     */
    private void pull(String merchant, RowCursor cursor, Semaphore inFlight, Semaphore confirming) {
        try {
            pullRows(cursor, inFlight, confirming);
        } catch (RuntimeException e) { // the caller's stop supplier threw: a task has no caller to throw to
            cursor.end();
            state.failedWith(merchant, e);
        }
    }

    private void pullRows(RowCursor cursor, Semaphore inFlight, Semaphore confirming) {
        for (RowCursor.Taken taken = cursor.next(); taken != null; taken = cursor.next()) {
            RefundRow row = taken.row();
            inFlight.acquireUninterruptibly();
            InFlightSlots.Slot slot = new InFlightSlots.Slot(inFlight);
            try {
                // With one in flight a row claimed just now goes out: the stop was asked before its claim. With more, a
                // claimed row may have waited for its place, and goes back if the run stopped meanwhile.
                if (state.stopped() && (confirming != null || !taken.claimedNow())) {
                    cursor.end(); // a claimed row stays claimed ahead, for the put-back
                    return;
                }
                if (state.skipped(row.id())) {
                    continue;
                }
                if (!cursor.sending(row.id())) {
                    return;
                }
                steps.process(row, row.pending(), confirming == null ? null : new InFlightSlots.ConfirmGate(slot, confirming));
            } catch (FenceViolation v) {
                state.refused(row.id(), v);
            } catch (RuntimeException | SQLException e) {
                state.failedWith(row.id(), e);
            } finally {
                slot.free();
            }
        }
    }

    /**
     * The run's rows in order, shared by its tasks: each row is taken once, and the pending rows are
     * claimed ahead, {@code concurrency} at a time, by the task that reaches the first of them. Once
     * a claim is refused or the run stops, no row is taken again. Thread-safe.
     */
    private final class RowCursor {
        private final List<RefundRow> rows;
        /** The next row to take; guarded by the cursor, which is held across a claim's round trip. */
        private int next;
        /**
         * Claimed, not yet sent: put back if the run stops early. A concurrent set and no lock: it is read for
         * the row at the cursor and written by every task about to send, and one monitor for both was
         * contended with 32 in flight (3.8 % of a worker's CPU samples: BENCHMARKS.md, "fewer wake-ups").
         */
        private final Set<String> claimedAhead = ConcurrentHashMap.newKeySet();
        /** No row is taken once set; read without a lock (see {@link #sending}). */
        private volatile boolean ended;

        RowCursor(List<RefundRow> rows) {
            this.rows = rows;
        }

        /** A row taken; {@code claimedNow} when this take claimed it (and the rows after it, up to a place each). */
        record Taken(RefundRow row, boolean claimedNow) {
        }

        /** The next row to settle, claimed if it was pending; null when there is none or the run stopped. */
        synchronized Taken next() {
            while (!ended && next < rows.size()) {
                RefundRow row = rows.get(next);
                boolean claimNow = row.pending() && !claimedAhead.contains(row.id()) && !state.skipped(row.id());
                // The claim is made holding the cursor: the tasks after this one need its rows anyway.
                if (claimNow && (state.stopped() || !claimedFrom(row))) {
                    end();
                    return null;
                }
                next++;
                if (!state.skipped(row.id())) {
                    return new Taken(row, claimNow);
                }
            }
            return null;
        }

        /** Claims from {@code row} on; false, recorded, when the run must stop: a task has no caller to throw to. */
        private boolean claimedFrom(RefundRow row) {
            Optional<List<String>> claimed;
            try {
                claimed = claimAhead(rows, next);
            } catch (RuntimeException e) { // the check before write could not read the lease
                state.failedWith(row.id(), e);
                return false;
            }
            // Added before the rows can be taken (the cursor is held), and also once the run has ended: put back with the rest.
            claimed.ifPresent(claimedAhead::addAll);
            return claimed.isPresent();
        }

        /**
         * A row about to be settled is no longer claimed ahead; false, and nothing changed, once the run
         * has ended. A task that passes the check as another ends the run sends its row, as if it had
         * come first: the put-back reads the set only once every task has ended.
         */
        boolean sending(String refundId) {
            if (ended) {
                return false; // a claimed row is left for the put-back
            }
            claimedAhead.remove(refundId);
            return true;
        }

        void end() {
            ended = true;
        }

        /** Once every task has ended. */
        Set<String> claimedAhead() {
            return Set.copyOf(claimedAhead);
        }
    }

    /**
     * Rows claimed ahead but never sent go back to pending when the run stopped early for a reason
     * that is not a violation: the gateway down, a stop, a database wait, an error (refused
     * credentials among them).
     */
    private void putBackClaimedAhead(Set<String> claimedAhead) {
        if (!(state.gatewayDown() || state.stopRequested() || state.databaseWait() != null || state.erred()) || state.violated()) {
            return;
        }
        for (String id : claimedAhead) {
            try {
                // Asked per row: a put-back that waits too long makes the rest "before a database wait".
                steps.putBack(id, state.gatewayDown() ? "claimed, never sent before the gateway went down"
                        : state.databaseWait() != null ? "claimed, never sent before a database wait ran out"
                        : state.erred() ? "claimed, never sent before the run failed"
                        : "claimed, never sent before the stop");
            } catch (FenceViolation v) {
                state.refused(id, v);
            } catch (RuntimeException | SQLException e) {
                state.failedWith(id, e);
            }
        }
    }

    /**
     * The rows whose amount is a refund amount in their currency (ISO 4217 minor units), each with
     * its amount written in exactly that many decimals. The others are never sent, claimed or
     * marked: no gateway refused them, and a person must decide what the amount was meant to be
     * (a JPY 1.50 is not 1 or 2). They stay as they are and fail the run, with the reason.
     */
    private List<RefundRow> sendable(List<RefundRow> rows) {
        List<RefundRow> sendable = new ArrayList<>(rows.size());
        for (RefundRow row : rows) {
            Optional<String> problem = MinorUnits.problem(row.amount(), row.currency());
            if (problem.isPresent()) {
                state.needsOperator(row, problem.get());
            } else {
                sendable.add(row.withAmount(MinorUnits.exact(row.amount(), row.currency())));
            }
        }
        return sendable;
    }

    /**
     * Appends the journal lines the merchant's confirmed refunds lack (this run's, and any an
     * earlier holder confirmed but did not journal), in one transaction fenced with this token. At
     * the end of the run, so that it also covers the confirms a stale holder landed while this run
     * took its rows over.
     */
    private void journal(String merchant) {
        long asked = System.nanoTime();
        try {
            List<JournalLine> confirmed = RefundRow.confirmed(settings.dataSource(), merchant);
            List<JournalLine> appended = settings.journal().appendMissing(lease.resource(), merchant, lease.token(), confirmed,
                    () -> settings.hook().reached(SettlementWorker.Phase.IN_JOURNAL, merchant));
            state.event(SettlementEvent.Type.JOURNALED, merchant, appended.size() + " lines appended");
        } catch (FenceViolation v) {
            state.refused(merchant, v);
        } catch (RuntimeException | SQLException e) {
            if (!state.databaseWaited(merchant, "journal append of " + merchant, e, System.nanoTime() - asked)) {
                state.failedWith(merchant, e);
            }
        }
    }

    /**
     * Claims the pending rows from {@code from} on, one per in-flight slot, in one fenced
     * statement, just before the first of them is sent: one round trip and one commit for
     * {@code concurrency} claims. All or none: a refusal rolls the others back and stops the run;
     * a row an earlier holder finished is skipped. The rows claimed; empty when the run must stop.
     */
    private Optional<List<String>> claimAhead(List<RefundRow> rows, int from) {
        List<String> ids = new ArrayList<>();
        for (int i = from; i < rows.size() && ids.size() < settings.concurrency(); i++) {
            if (rows.get(i).pending() && !state.skipped(rows.get(i).id())) {
                ids.add(rows.get(i).id());
            }
        }
        if (!state.stillHeld(ids.get(0))) {
            return Optional.empty();
        }
        return steps.claim(ids);
    }

    /** True when {@link #settle} was interrupted and cleared the thread's interrupt flag. */
    boolean interrupted() {
        return interrupted.get();
    }

    /** The first read of the merchant's rows failed: a database wait or an error ends the run. */
    void failedToRead(String merchant, Exception e) {
        if (!state.databaseWaited(merchant, "read of " + merchant + "'s refunds", e, -1)) {
            state.failed(e.getMessage());
        }
    }

    /** How the run ended; {@code stale} when its lease was already gone at the end. Once {@link #settle} has returned. */
    SettlementOutcome outcome(String merchant, boolean stale) {
        return state.outcome(merchant, stale);
    }
}
