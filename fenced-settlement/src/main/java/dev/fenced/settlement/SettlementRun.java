package dev.fenced.settlement;

import dev.fenced.FenceViolation;
import dev.fenced.Lease;
import dev.fenced.provider.MinorUnits;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * One settlement run: the loop that reads a merchant's unsettled rows, claims them, hands each to
 * {@link RefundSteps} on a pool of {@code concurrency} places in flight, puts back what it claimed
 * but never sent when it stops early, and appends the journal. It is given its lease, its
 * {@link RunSettings} and a {@link RunReporter}, and knows nothing of the worker that started it.
 * Lives as long as one {@link SettlementWorker#settle} call; not reused.
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

    SettlementRun(Lease lease, RunSettings settings, RunReporter report, AtomicBoolean leaseLost, BooleanSupplier stopRequested) {
        this.lease = lease;
        this.settings = settings;
        this.state = new RunState(lease, settings, report, leaseLost, stopRequested);
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
     * the rows at the start is the caller's to record ({@link #failedToRead}).
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
        RunTasks tasks = new RunTasks(pipelined ? 2 * settings.concurrency() : 1);
        Semaphore inFlight = new Semaphore(settings.concurrency());
        Semaphore confirming = new Semaphore(settings.concurrency());
        Set<String> claimedAhead = new HashSet<>();
        if (confirms != null) {
            confirms.runStarted(settings.concurrency());
        }
        try {
            for (int i = 0; i < rows.size(); i++) {
                RefundRow row = rows.get(i);
                boolean claimNow = row.pending() && !claimedAhead.contains(row.id()) && !state.skipped(row.id());
                if (pipelined && claimNow && (state.stopped() || !claimAhead(rows, i, claimedAhead))) {
                    break;
                }
                if (state.skipped(row.id())) {
                    continue;
                }
                inFlight.acquireUninterruptibly();
                InFlightSlots.Slot slot = new InFlightSlots.Slot(inFlight);
                if (state.stopped() || (!pipelined && claimNow && !claimAhead(rows, i, claimedAhead))) {
                    slot.free();
                    break;
                }
                if (state.skipped(row.id())) {
                    slot.free();
                    continue;
                }
                claimedAhead.remove(row.id());
                tasks.execute(() -> {
                    try {
                        steps.process(row, row.pending(), pipelined ? new InFlightSlots.ConfirmGate(slot, confirming) : null);
                    } catch (FenceViolation v) {
                        state.refused(row.id(), v);
                    } catch (RuntimeException | SQLException e) {
                        state.failedWith(row.id(), e);
                    } finally {
                        slot.free();
                    }
                });
            }
        } finally {
            tasks.awaitAll();
            if (confirms != null) {
                confirms.runEnded(settings.concurrency());
            }
            if (ownConfirms) {
                confirms.shutdown();
            }
        }
        putBackClaimedAhead(claimedAhead);
        if (settings.journal() != null && !state.violated()) {
            journal(merchant);
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
     * a row an earlier holder finished is skipped.
     */
    private boolean claimAhead(List<RefundRow> rows, int from, Set<String> claimedAhead) {
        List<String> ids = new ArrayList<>();
        for (int i = from; i < rows.size() && ids.size() < settings.concurrency(); i++) {
            if (rows.get(i).pending() && !state.skipped(rows.get(i).id())) {
                ids.add(rows.get(i).id());
            }
        }
        if (!state.stillHeld(ids.get(0))) {
            return false;
        }
        Optional<List<String>> claimed = steps.claim(ids);
        claimed.ifPresent(claimedAhead::addAll);
        return claimed.isPresent();
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
