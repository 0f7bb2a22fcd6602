package dev.fenced.settlement;

import dev.fenced.FenceViolation;
import dev.fenced.FencedException;
import dev.fenced.Lease;
import dev.fenced.jdbc.DatabaseWaitException;
import dev.fenced.settlement.SettlementOutcome.Result;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * What one run has done so far and why it would stop: its counters, the first violation, error or
 * database wait, a lost lease, the gateway found down, a stop asked for; and the
 * {@link SettlementOutcome} they come to. Each record is reported as it is made. Thread-safe,
 * except where a method says it belongs to the settling thread.
 */
final class RunState {
    private final Lease lease;
    private final long token;
    private final RunReporter report;
    private final int gatewayFailureLimit;
    private final boolean checkBeforeWrite;
    private final AtomicBoolean leaseLost;
    private final BooleanSupplier stopRequested;

    private final AtomicReference<FenceViolation> violation = new AtomicReference<>();
    private final AtomicReference<String> error = new AtomicReference<>();
    /** The one line of the first database wait that ran out: what waited on what. */
    private final AtomicReference<String> databaseWait = new AtomicReference<>();
    private final AtomicInteger sent = new AtomicInteger();
    private final AtomicInteger recovered = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicInteger gatewayFailuresInARow = new AtomicInteger();
    private final AtomicBoolean gatewayDown = new AtomicBoolean();
    private final Set<String> skipped = ConcurrentHashMap.newKeySet();
    /** Of the skipped, the rows the earlier holder finished as failed: they keep the run from completing. */
    private final Set<String> failedElsewhere = ConcurrentHashMap.newKeySet();
    /** Rows left for an operator, each with why: an amount that does not fit its currency, a key the provider may have forgotten. */
    private final List<String> needOperator = new CopyOnWriteArrayList<>();
    /** Rows read at the start; settling thread only. */
    private int read;

    RunState(Lease lease, RunSettings settings, RunReporter report, AtomicBoolean leaseLost, BooleanSupplier stopRequested) {
        this.lease = lease;
        this.token = lease.token();
        this.report = report;
        this.gatewayFailureLimit = settings.gatewayFailureLimit();
        this.checkBeforeWrite = settings.checkBeforeWrite();
        this.leaseLost = leaseLost;
        this.stopRequested = stopRequested;
    }

    void event(SettlementEvent.Type type, String subjectId, String detail) {
        report.event(type, subjectId, detail);
    }

    boolean stopped() {
        return violation.get() != null || error.get() != null || databaseWait.get() != null || leaseLost.get() || gatewayDown.get()
                || stopRequested.getAsBoolean();
    }

    boolean violated() {
        return violation.get() != null;
    }

    /** An error stopped the run: one refund's, refused credentials, or the first read's. */
    boolean erred() {
        return error.get() != null;
    }

    boolean gatewayDown() {
        return gatewayDown.get();
    }

    boolean stopRequested() {
        return stopRequested.getAsBoolean();
    }

    /** The wait that stopped the run, or null. */
    String databaseWait() {
        return databaseWait.get();
    }

    boolean skipped(String refundId) {
        return skipped.contains(refundId);
    }

    /** The check-before-write mechanism: GET the lease before a write; a hint, not a fence. */
    boolean stillHeld(String refundId) {
        if (!checkBeforeWrite || lease.isHeld()) {
            return true;
        }
        leaseLost.set(true);
        event(SettlementEvent.Type.LEASE_LOST, refundId, "check before write found the lease gone");
        return false;
    }

    /** Counts refunds that ended without an answer from the gateway; enough in a row stop the run. */
    void gatewayAnswer(String refundId, GatewayAnswer answer) {
        report.gatewayAnswered(answer.kind());
        if (answer.gatewayAnswered()) {
            gatewayFailuresInARow.set(0);
        } else if (gatewayFailuresInARow.incrementAndGet() >= gatewayFailureLimit && gatewayDown.compareAndSet(false, true)) {
            event(SettlementEvent.Type.GATEWAY_DOWN, refundId, gatewayFailuresInARow.get() + " refunds in a row without an answer: "
                    + answer.reason());
        }
    }

    /** Settling thread only, before any refund is sent. */
    void read(int rows) {
        read = rows;
    }

    /** A row never sent: its amount does not fit its currency. */
    void needsOperator(RefundRow row, String problem) {
        needOperator.add(row.id() + ": " + problem);
        event(SettlementEvent.Type.LEFT, row.id(), row.state() + ", never sent, for an operator: " + problem);
    }

    /** A row in {@code sending} not sent again, since its key may be forgotten, and not found by reference either. */
    void keyOutlived(RefundRow row, String problem) {
        needOperator.add(row.id() + ": " + problem);
        event(SettlementEvent.Type.LEFT, row.id(), "sending, not sent again, for an operator: " + problem);
    }

    /** Rows the claim left out, finished by an earlier holder after this run read them. */
    void finishedEarlier(RunWrites.ClaimResult.Claimed claim) {
        for (String id : claim.finishedEarlier()) {
            boolean failedEarlier = claim.failedEarlier().contains(id);
            if (failedEarlier) {
                // Refused, not paid: counted apart so that the run does not report the batch settled.
                failedElsewhere.add(id);
            }
            skipped.add(id);
            event(SettlementEvent.Type.SKIPPED, id, failedEarlier ? "failed by an earlier holder" : "finished by an earlier holder");
        }
    }

    void confirmed(String refundId, String gatewayRefundId) {
        sent.incrementAndGet();
        event(SettlementEvent.Type.CONFIRMED, refundId, gatewayRefundId);
    }

    /** A row found in {@code sending} whose refund the gateway already had. */
    void recovered() {
        recovered.incrementAndGet();
    }

    void markedFailed(String refundId, String reason) {
        failed.incrementAndGet();
        event(SettlementEvent.Type.FAILED, refundId, reason);
    }

    /** A fenced write was refused: a violation stops the run; a missing row is an error. */
    void refused(String refundId, FencedException refusal) {
        if (!(refusal instanceof FenceViolation v)) {
            failedWith(refundId, refusal);
            return;
        }
        violation.compareAndSet(null, v);
        event(SettlementEvent.Type.VIOLATION, refundId, "stored fence " + v.storedFence() + ", state " + v.storedState());
        if (v.storedFence() != null && v.storedFence() > token) {
            // The counter is behind the rows (a lagging replica was promoted): it must be raised,
            // or every later holder is refused the same way.
            report.fenceAheadOfCounter(v.storedFence());
        }
    }

    /**
     * True when {@code e} says a bound on a database wait ran out ({@link DatabaseWaitException}):
     * the run records it in one line naming what waited on what (the first one only), and stops
     * claiming as on an outage. {@code waitedNanos} is how long the statement ran, -1 when unknown.
     */
    boolean databaseWaited(String subjectId, String what, Exception e, long waitedNanos) {
        Optional<DatabaseWaitException> wait = DatabaseWaitException.in(e);
        if (wait.isEmpty()) {
            return false;
        }
        String line = what + " waited " + (waitedNanos < 0 ? "" : String.format(Locale.ROOT, "%.1f s ", waitedNanos / 1e9))
                + "for " + wait.get().kind().waitedFor() + "; gave up";
        if (databaseWait.compareAndSet(null, line)) {
            event(SettlementEvent.Type.DATABASE_WAIT, subjectId, line);
        }
        return true;
    }

    void failedWith(String subjectId, Exception e) {
        if (databaseWaited(subjectId, "a write of " + subjectId, e, -1)) {
            return;
        }
        error.compareAndSet(null, subjectId + ": " + e.getMessage());
        event(SettlementEvent.Type.ERROR, subjectId, e.getMessage());
    }

    /** The gateway refused the credentials: nothing will be let in until someone fixes them, so the run stops and fails at once. */
    void credentialsRefused(String refundId, String reason) {
        String line = "the gateway refused the credentials (check the API key in the gateway URL or the adapter): " + reason;
        if (error.compareAndSet(null, line)) {
            event(SettlementEvent.Type.ERROR, refundId, line);
        }
    }

    /** An error outside any one refund (the first read of the rows): recorded, not reported as an event. */
    void failed(String message) {
        error.compareAndSet(null, message);
    }

    /** Rows read at the start that this run neither finished nor found finished. */
    private int left() {
        return read - sent.get() - failed.get() - skipped.size();
    }

    /** How the run ended, from what it recorded; once its threads are done. */
    SettlementOutcome outcome(String merchant, boolean stale) {
        Result result = result();
        String why = error.get() != null || needOperator.isEmpty() ? error.get()
                : needOperator.size() + (needOperator.size() == 1 ? " refund needs" : " refunds need") + " an operator, left unsent: "
                + String.join("; ", needOperator.subList(0, Math.min(3, needOperator.size()))) + (needOperator.size() > 3 ? "; ..." : "");
        return SettlementOutcome.builder(result, merchant).token(token).sent(sent.get()).recovered(recovered.get()).failed(failed.get())
                .skipped(skipped.size()).left(left()).violation(violation.get())
                .error(result == Result.DATABASE_WAIT ? databaseWait.get() : why).stale(stale).failedElsewhere(failedElsewhere.size())
                .build();
    }

    private Result result() {
        if (violation.get() != null) {
            return Result.FENCE_VIOLATION;
        } else if (databaseWait.get() != null) {
            return Result.DATABASE_WAIT;
        } else if (error.get() != null || !needOperator.isEmpty()) {
            return Result.FAILED; // before the outcomes that say "run again": a row left for an operator stays left
        } else if (leaseLost.get()) {
            return Result.LEASE_LOST;
        } else if (gatewayDown.get()) {
            return Result.GATEWAY_UNAVAILABLE;
        } else if (left() > 0 && stopRequested.getAsBoolean()) {
            return Result.STOPPED;
        } else if (left() > 0) {
            return Result.GATEWAY_UNAVAILABLE;
        } else if (failed.get() > 0 || !failedElsewhere.isEmpty()) {
            return Result.REJECTED;
        }
        return Result.COMPLETED;
    }
}
