package dev.fenced.settlement;

import dev.fenced.FenceViolation;
import dev.fenced.FencedException;
import dev.fenced.Lease;
import dev.fenced.gateway.GatewayRefund;
import dev.fenced.gateway.MinorUnits;
import dev.fenced.jdbc.DatabaseWaitException;
import dev.fenced.settlement.SettlementOutcome.Result;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One settlement run of a {@link SettlementWorker}: the lease it holds and its token, the loop that
 * claims, sends and confirms, and the counters and reason it stopped with. Lives as long as one
 * {@link SettlementWorker#settle} call.
 */
final class SettlementRun {
    final SettlementWorker worker;
    final Lease lease;
    final long token;
    final AtomicBoolean leaseLost;
    final AtomicReference<FenceViolation> violation = new AtomicReference<>();
    final AtomicReference<String> error = new AtomicReference<>();
    /** The one line of the first database wait that ran out: what waited on what. */
    final AtomicReference<String> databaseWait = new AtomicReference<>();
    final AtomicInteger sent = new AtomicInteger();
    final AtomicInteger recovered = new AtomicInteger();
    final AtomicInteger failed = new AtomicInteger();
    final AtomicInteger gatewayFailuresInARow = new AtomicInteger();
    final AtomicBoolean gatewayDown = new AtomicBoolean();
    final Set<String> skipped = ConcurrentHashMap.newKeySet();
    /** Rows never sent because their amount does not fit their currency, each with why; written by the settling thread only. */
    final List<String> needOperator = new ArrayList<>();
    /** Of the skipped, the rows the earlier holder finished as failed: they keep the run from completing. */
    final Set<String> failedElsewhere = ConcurrentHashMap.newKeySet();
    final RunWrites rowWrites = new RunWrites(this);
    final ConfirmBatcher confirmations;
    final GatewayCalls calls;
    /**
     * The one thread that writes the confirm batches when refunds run in parallel. A thread that
     * reads a socket keeps the JDK's per-thread socket-buffer cache (a 1,024-slot array, about
     * 4 KiB of heap); when any of a run's 2 × concurrency threads could lead a batch, that was
     * about 8 KiB per refund in flight (BENCHMARKS.md, Fleet). Null with one in flight: no hop.
     */
    private final ExecutorService committer;
    int read;

    private final BooleanSupplier stopRequested;

    SettlementRun(SettlementWorker worker, Lease lease, AtomicBoolean leaseLost, BooleanSupplier stopRequested) {
        this.worker = worker;
        this.stopRequested = stopRequested;
        this.lease = lease;
        this.token = lease.token();
        this.leaseLost = leaseLost;
        this.calls = new GatewayCalls(worker.gateway, worker.gatewayAttempts, worker.gatewayBackoff, this::stopped);
        this.committer = worker.concurrency > 1 ? Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "confirm-" + lease.resource());
            thread.setDaemon(true);
            return thread;
        }) : null;
        this.confirmations = new ConfirmBatcher(committer == null ? rowWrites::writeConfirms : this::writeConfirmsOnCommitter);
    }

    /** The batch written on the committer thread; the caller waits for it, also when interrupted: a confirm is not abandoned half-way. */
    private Map<String, FencedException> writeConfirmsOnCommitter(Map<String, String> gatewayReferenceById) throws SQLException {
        Future<Map<String, FencedException>> written = committer.submit(() -> rowWrites.writeConfirms(gatewayReferenceById));
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return written.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof SQLException sql) {
                        throw sql;
                    }
                    if (e.getCause() instanceof RuntimeException runtime) {
                        throw runtime;
                    }
                    if (e.getCause() instanceof Error error) {
                        throw error;
                    }
                    throw new IllegalStateException("the confirm batch failed: " + e.getCause(), e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The check-before-write mechanism: GET the lease before a write; a hint, not a fence. */
    boolean stillHeld(String refundId) {
        if (!worker.checkBeforeWrite) {
            return true;
        }
        if (lease.isHeld()) {
            return true;
        }
        leaseLost.set(true);
        emit(SettlementEvent.Type.LEASE_LOST, refundId, "check before write found the lease gone");
        return false;
    }

    boolean stopped() {
        return violation.get() != null || error.get() != null || databaseWait.get() != null || leaseLost.get() || gatewayDown.get()
                || stopRequested.getAsBoolean();
    }

    /** Counts refunds that ended without an answer from the gateway; enough in a row stop the run. */
    void gatewayAnswer(String refundId, GatewayAnswer answer) {
        worker.gatewayAnswered(answer.kind());
        if (answer.gatewayAnswered()) {
            gatewayFailuresInARow.set(0);
        } else if (gatewayFailuresInARow.incrementAndGet() >= worker.gatewayFailureLimit && gatewayDown.compareAndSet(false, true)) {
            emit(SettlementEvent.Type.GATEWAY_DOWN, refundId, gatewayFailuresInARow.get() + " refunds in a row without an answer: "
                    + answer.reason());
        }
    }

    void settle(String merchant) throws SQLException {
        List<RefundRow> rows = RefundRow.unsettled(worker.dataSource, merchant);
        read = rows.size();
        rows = sendable(rows);
        // With more than one in flight, a refund's slot is freed once its gateway call has
        // answered (its confirm then waits in the group commit on its own thread), and the next
        // rows are claimed while the current ones are in flight: neither database round trip
        // holds up the next gateway call. With one in flight every step waits for the last.
        boolean pipelined = worker.concurrency > 1;
        ExecutorService pool = Executors.newFixedThreadPool(pipelined ? 2 * worker.concurrency : 1, runnable -> {
            Thread thread = new Thread(runnable, "settle-" + merchant);
            thread.setDaemon(true);
            return thread;
        });
        Semaphore inFlight = new Semaphore(worker.concurrency);
        Semaphore confirming = new Semaphore(worker.concurrency);
        Set<String> claimedAhead = new HashSet<>();
        try {
            for (int i = 0; i < rows.size(); i++) {
                RefundRow row = rows.get(i);
                boolean claimNow = row.pending() && !claimedAhead.contains(row.id()) && !skipped.contains(row.id());
                if (pipelined && claimNow && (stopped() || !claimAhead(rows, i, claimedAhead))) {
                    break;
                }
                if (skipped.contains(row.id())) {
                    continue;
                }
                inFlight.acquireUninterruptibly();
                InFlightSlots.Slot slot = new InFlightSlots.Slot(inFlight);
                if (stopped() || (!pipelined && claimNow && !claimAhead(rows, i, claimedAhead))) {
                    slot.free();
                    break;
                }
                if (skipped.contains(row.id())) {
                    slot.free();
                    continue;
                }
                claimedAhead.remove(row.id());
                pool.execute(() -> {
                    try {
                        process(row, row.pending(), pipelined ? new InFlightSlots.ConfirmGate(slot, confirming) : null);
                    } catch (FenceViolation v) {
                        refused(row.id(), v);
                    } catch (RuntimeException | SQLException e) {
                        failedWith(row.id(), e);
                    } finally {
                        slot.free();
                    }
                });
            }
        } finally {
            pool.shutdown();
            awaitQuietly(pool);
            if (committer != null) {
                committer.shutdown();
            }
        }
        if ((gatewayDown.get() || stopRequested.getAsBoolean() || databaseWait.get() != null) && violation.get() == null) {
            for (String id : claimedAhead) {
                try {
                    rowWrites.putBack(id, gatewayDown.get() ? "claimed, never sent before the gateway went down"
                            : databaseWait.get() != null ? "claimed, never sent before a database wait ran out" : "claimed, never sent before the stop");
                } catch (FenceViolation v) {
                    refused(id, v);
                } catch (RuntimeException | SQLException e) {
                    failedWith(id, e);
                }
            }
        }
        if (worker.journal != null && violation.get() == null) {
            journal(merchant);
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
                needOperator.add(row.id() + ": " + problem.get());
                emit(SettlementEvent.Type.LEFT, row.id(), row.state() + ", never sent, for an operator: " + problem.get());
            } else {
                sendable.add(new RefundRow(row.id(), row.merchant(), MinorUnits.exact(row.amount(), row.currency()), row.currency(),
                        row.idempotencyKey(), row.state(), row.deployment()));
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
            List<JournalLine> confirmed = RefundRow.confirmed(worker.dataSource, merchant);
            List<JournalLine> appended = worker.journal.appendMissing(lease.resource(), merchant, token, confirmed,
                    () -> worker.hook.reached(SettlementWorker.Phase.IN_JOURNAL, merchant));
            emit(SettlementEvent.Type.JOURNALED, merchant, appended.size() + " lines appended");
        } catch (FenceViolation v) {
            refused(merchant, v);
        } catch (RuntimeException | SQLException e) {
            if (!databaseWaited(merchant, "journal append of " + merchant, e, System.nanoTime() - asked)) {
                failedWith(merchant, e);
            }
        }
    }

    /**
     * Claims the pending rows from {@code from} on, one per in-flight slot, in one fenced
     * statement, just before the first of them is sent: one round trip and one commit for
     * {@code concurrency} claims. All or none: a refusal rolls the others back and stops the run;
     * a row an earlier holder finished is skipped.
     */
    boolean claimAhead(List<RefundRow> rows, int from, Set<String> claimedAhead) {
        List<String> ids = new ArrayList<>();
        for (int i = from; i < rows.size() && ids.size() < worker.concurrency; i++) {
            if (rows.get(i).pending() && !skipped.contains(rows.get(i).id())) {
                ids.add(rows.get(i).id());
            }
        }
        if (!stillHeld(ids.get(0))) {
            return false;
        }
        List<String> claimed;
        long asked = System.nanoTime();
        try {
            claimed = rowWrites.claim(ids);
        } catch (RuntimeException | SQLException e) {
            if (!databaseWaited(ids.get(0), "claim of " + String.join(", ", ids), e, System.nanoTime() - asked)) {
                failedWith(ids.get(0), e);
            }
            return false;
        }
        if (claimed == null) {
            return false;
        }
        claimedAhead.addAll(claimed);
        claimed.forEach(id -> emit(SettlementEvent.Type.CLAIMED, id, null));
        return true;
    }

    /** A fenced write was refused: a violation stops the run; a missing row is an error. */
    void refused(String refundId, FencedException refusal) {
        if (!(refusal instanceof FenceViolation v)) {
            failedWith(refundId, refusal);
            return;
        }
        violation.compareAndSet(null, v);
        emit(SettlementEvent.Type.VIOLATION, refundId, "stored fence " + v.storedFence() + ", state " + v.storedState());
        if (v.storedFence() != null && v.storedFence() > token) {
            // The counter is behind the rows (a lagging replica was promoted): raise it, or
            // every later holder is refused the same way.
            worker.raiseCounter(lease.resource(), v.storedFence());
        }
    }

    /** Tells the worker's listener and log, under this run's lease and token. */
    void emit(SettlementEvent.Type type, String refundId, String detail) {
        worker.emit(lease.resource(), type, refundId, token, detail);
    }

    /**
     * True when {@code e} says a bound on a database wait ran out ({@link DatabaseWaitException}):
     * the run records it in one line naming what waited on what (the first one only), and stops
     * claiming as on an outage. {@code waitedNanos} is how long the statement ran, -1 when unknown.
     */
    boolean databaseWaited(String refundId, String what, Exception e, long waitedNanos) {
        Optional<DatabaseWaitException> wait = DatabaseWaitException.in(e);
        if (wait.isEmpty()) {
            return false;
        }
        String line = what + " waited " + (waitedNanos < 0 ? "" : String.format(Locale.ROOT, "%.1f s ", waitedNanos / 1e9))
                + "for " + wait.get().kind().waitedFor() + "; gave up";
        if (databaseWait.compareAndSet(null, line)) {
            emit(SettlementEvent.Type.DATABASE_WAIT, refundId, line);
        }
        return true;
    }

    void failedWith(String refundId, Exception e) {
        if (databaseWaited(refundId, "a write of " + refundId, e, -1)) {
            return;
        }
        error.compareAndSet(null, refundId + ": " + e.getMessage());
        emit(SettlementEvent.Type.ERROR, refundId, e.getMessage());
    }

    /**
     * {@code claimed} is false for a row found in {@code sending}: it is looked up, then claimed
     * alone. {@code gate} is null when the refund keeps its slot until its confirm is written.
     */
    void process(RefundRow row, boolean claimed, InFlightSlots.ConfirmGate gate) throws SQLException {
        GatewayAnswer answer = null;
        if (!claimed) {
            // A call for this row may have gone out before its holder stopped: ask first, under the row's key.
            answer = calls.lookup(row);
            gatewayAnswer(row.id(), answer);
            emit(SettlementEvent.Type.CHECKED, row.id(),
                    answer.refund() != null ? "exists " + answer.refund().id() : answer.kind().name().toLowerCase(Locale.ROOT));
            if (!answer.gatewayAnswered()) {
                emit(SettlementEvent.Type.LEFT, row.id(), "sending: the lookup got no answer: " + answer.reason());
                return;
            }
            if (!stillHeld(row.id())) {
                return;
            }
            List<String> taken;
            long asked = System.nanoTime();
            try {
                taken = rowWrites.claim(List.of(row.id()));
            } catch (RuntimeException | SQLException e) {
                if (databaseWaited(row.id(), "claim of " + row.id(), e, System.nanoTime() - asked)) {
                    return;
                }
                throw e;
            }
            if (taken == null || taken.isEmpty()) {
                return;
            }
            emit(SettlementEvent.Type.CLAIMED, row.id(), null);
        }
        worker.hook.reached(SettlementWorker.Phase.AFTER_CLAIM, row.id());
        if (violation.get() != null) {
            return; // another row proved this holder stale: leave the claim for the next holder to look up
        }
        if (answer != null && answer.kind() == GatewayAnswer.Kind.SUCCEEDED) {
            recovered.incrementAndGet();
        } else if (answer == null || answer.kind() == GatewayAnswer.Kind.ABSENT) {
            if (!stillHeld(row.id())) {
                return;
            }
            answer = calls.create(row);
            gatewayAnswer(row.id(), answer);
        }
        switch (answer.kind()) {
            case SUCCEEDED -> confirm(row, answer.refund(), gate);
            case REJECTED -> rowWrites.markFailed(row.id(), answer.reason());
            case UNAVAILABLE -> rowWrites.putBack(row.id(), "the gateway was unavailable: " + answer.reason());
            default -> emit(SettlementEvent.Type.LEFT, row.id(), "sending: the outcome is in doubt: " + answer.reason());
        }
    }

    void confirm(RefundRow row, GatewayRefund refund, InFlightSlots.ConfirmGate gate) throws SQLException {
        emit(SettlementEvent.Type.GATEWAY, row.id(), refund.id());
        worker.hook.reached(SettlementWorker.Phase.AFTER_GATEWAY, row.id());
        if (!stillHeld(row.id())) {
            return;
        }
        worker.hook.reached(SettlementWorker.Phase.BEFORE_CONFIRM, row.id());
        Optional<FencedException> refusal;
        if (gate != null) {
            gate.enter();
        }
        long asked = System.nanoTime();
        try {
            refusal = confirmations.confirm(row.id(), refund.id());
        } catch (RuntimeException | SQLException e) {
            // The row stays sending, for the next holder to look up: its refund was made.
            if (databaseWaited(row.id(), "confirm of " + row.id(), e, System.nanoTime() - asked)) {
                return;
            }
            throw e;
        } finally {
            if (gate != null) {
                gate.leave();
            }
        }
        if (refusal.isPresent()) {
            refused(row.id(), refusal.get());
            return;
        }
        sent.incrementAndGet();
        emit(SettlementEvent.Type.CONFIRMED, row.id(), refund.id());
    }

    SettlementOutcome outcome(String merchant, boolean stale) {
        Result result;
        if (violation.get() != null) {
            result = Result.FENCE_VIOLATION;
        } else if (databaseWait.get() != null) {
            result = Result.DATABASE_WAIT;
        } else if (error.get() != null) {
            result = Result.FAILED;
        } else if (leaseLost.get()) {
            result = Result.LEASE_LOST;
        } else if (gatewayDown.get()) {
            result = Result.GATEWAY_UNAVAILABLE;
        } else if (!needOperator.isEmpty()) {
            result = Result.FAILED;
        } else if (left() > 0 && stopRequested.getAsBoolean()) {
            result = Result.STOPPED;
        } else if (left() > 0) {
            result = Result.GATEWAY_UNAVAILABLE;
        } else if (failed.get() > 0 || !failedElsewhere.isEmpty()) {
            result = Result.REJECTED;
        } else {
            result = Result.COMPLETED;
        }
        String why = error.get() != null || needOperator.isEmpty() ? error.get()
                : needOperator.size() + (needOperator.size() == 1 ? " refund needs" : " refunds need") + " an operator, left unsent: "
                + String.join("; ", needOperator.subList(0, Math.min(3, needOperator.size()))) + (needOperator.size() > 3 ? "; ..." : "");
        return new SettlementOutcome(result, merchant, token, sent.get(), recovered.get(), failed.get(), skipped.size(), left(),
                violation.get(), result == Result.DATABASE_WAIT ? databaseWait.get() : why, stale, failedElsewhere.size());
    }

    /** Rows read at the start that this run neither finished nor found finished. */
    int left() {
        return read - sent.get() - failed.get() - skipped.size();
    }

    private static void awaitQuietly(ExecutorService pool) {
        try {
            while (!pool.awaitTermination(1, TimeUnit.MINUTES)) {
                // in-flight refunds finish their gateway call and confirm; they are not abandoned half-way
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
