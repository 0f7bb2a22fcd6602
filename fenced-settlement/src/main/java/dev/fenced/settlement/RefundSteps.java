package dev.fenced.settlement;

import dev.fenced.FencedException;
import dev.fenced.provider.GatewayRefund;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The steps of one refund in a run: the takeover lookup of a row found in {@code sending}, the
 * claim, the gateway call, and the confirm or the other end its answer calls for. Each step is
 * recorded in the run's {@link RunState}; a refusal or a database wait stops the run there, never a
 * retry. Thread-safe: the run's threads each carry their own refund through it.
 */
final class RefundSteps {
    private final RunState state;
    private final RunWrites writes;
    private final GatewayCalls calls;
    private final Confirmations confirmations;
    private final SettlementWorker.PhaseHook hook;
    private final KeyRetention keyRetention;

    /** Where a run's confirms go: its own batcher, or the one its process shares ({@link SharedConfirms}). */
    @FunctionalInterface
    interface Confirmations {
        /** Blocks until the confirm is written; says why it was refused, if it was. */
        Optional<FencedException> confirm(String refundId, String gatewayReference) throws SQLException;
    }

    RefundSteps(RunState state, RunWrites writes, GatewayCalls calls, Confirmations confirmations, SettlementWorker.PhaseHook hook,
                KeyRetention keyRetention) {
        this.state = state;
        this.writes = writes;
        this.calls = calls;
        this.confirmations = confirmations;
        this.hook = hook;
        this.keyRetention = keyRetention;
    }

    /**
     * Claims the rows in one fenced transaction and says which are now this run's; rows an earlier
     * holder finished are left out (so the list may be empty) and recorded as skipped. Empty when
     * the claim changed nothing and the run must stop claiming: a row was refused, a database wait
     * ran out, or the write failed, each recorded.
     */
    Optional<List<String>> claim(List<String> ids) {
        RunWrites.ClaimResult result;
        long asked = System.nanoTime();
        try {
            result = writes.claim(ids);
        } catch (RuntimeException | SQLException e) {
            if (!state.databaseWaited(ids.get(0), "claim of " + String.join(", ", ids), e, System.nanoTime() - asked)) {
                state.failedWith(ids.get(0), e);
            }
            return Optional.empty();
        }
        if (result instanceof RunWrites.ClaimResult.Refused refused) {
            state.refused(refused.refundId(), refused.refusal());
            return Optional.empty();
        }
        RunWrites.ClaimResult.Claimed claim = (RunWrites.ClaimResult.Claimed) result;
        state.finishedEarlier(claim);
        claim.claimed().forEach(id -> state.event(SettlementEvent.Type.CLAIMED, id, null));
        return Optional.of(claim.claimed());
    }

    /**
     * {@code claimed} is false for a row found in {@code sending}: it is looked up, then claimed
     * alone. {@code gate} is null when the refund keeps its slot until its confirm is written. A
     * row whose key the provider may have forgotten ({@link KeyRetention}) is looked up by
     * reference, claimed or not, and never sent: without its refund found it is left for an operator.
     */
    void process(RefundRow row, boolean claimed, InFlightSlots.ConfirmGate gate) throws SQLException {
        boolean keyOutlived = keyRetention.outlived(row);
        GatewayAnswer answer = null;
        if (!claimed) {
            answer = lookUpTakenOver(row, keyOutlived);
            if (answer == null) {
                return;
            }
        } else if (keyOutlived) {
            answer = lookUp(row, true);
            if (!answer.gatewayAnswered()) {
                return;
            }
        }
        hook.reached(SettlementWorker.Phase.AFTER_CLAIM, row.id());
        if (state.violated()) {
            return; // another row proved this holder stale: leave the claim for the next holder to look up
        }
        if (answer != null && answer.kind() == GatewayAnswer.Kind.SUCCEEDED) {
            state.recovered();
        } else if (answer == null || answer.kind() == GatewayAnswer.Kind.ABSENT) {
            if (keyOutlived) {
                state.keyOutlived(row, "first attempt at " + row.firstAttemptAt() + ", past the provider's key retention of "
                        + keyRetention.retention() + " less " + keyRetention.margin() + "; no refund found by reference:"
                        + " a request under the same key could make a second refund; reconcile, then decide");
                return;
            }
            if (!state.stillHeld(row.id())) {
                return;
            }
            answer = calls.create(row);
            state.gatewayAnswer(row.id(), answer);
        }
        switch (answer.kind()) {
            case SUCCEEDED -> confirm(row, answer.refund(), gate);
            case REJECTED -> {
                writes.markFailed(row.id(), answer.reason());
                state.markedFailed(row.id(), answer.reason());
            }
            case UNAVAILABLE -> {
                putBack(row.id(), "the gateway was unavailable: " + answer.reason());
                if (answer.credentialsRefused()) {
                    state.credentialsRefused(row.id(), answer.reason());
                }
            }
            default -> {
                state.event(SettlementEvent.Type.LEFT, row.id(), "sending: the outcome is in doubt: " + answer.reason());
                if (answer.credentialsRefused()) {
                    state.credentialsRefused(row.id(), answer.reason());
                }
            }
        }
    }

    /**
     * A call for a row found in {@code sending} may have gone out before its holder stopped: ask
     * first, under the row's key (by reference when the key may be forgotten, and also when the
     * row's age is unknown and the key found nothing), then claim it alone.
     * The lookup's answer once the row is this run's; null when it is not (no answer, lease gone,
     * claim refused or skipped).
     */
    private GatewayAnswer lookUpTakenOver(RefundRow row, boolean byReference) {
        GatewayAnswer answer = lookUp(row, byReference);
        if (answer.kind() == GatewayAnswer.Kind.ABSENT && !byReference && KeyRetention.ageUnknown(row)) {
            answer = lookUp(row, true); // how long ago it went out is unknown, so its key may be gone: ask by reference too
        }
        if (!answer.gatewayAnswered()) {
            return null;
        }
        if (!state.stillHeld(row.id()) || claim(List.of(row.id())).map(List::isEmpty).orElse(true)) {
            return null;
        }
        return answer;
    }

    /** One lookup, recorded; a lookup without an answer leaves the row in {@code sending}. */
    private GatewayAnswer lookUp(RefundRow row, boolean byReference) {
        GatewayAnswer answer = calls.lookup(row, byReference);
        state.gatewayAnswer(row.id(), answer);
        if (answer.credentialsRefused()) {
            state.credentialsRefused(row.id(), answer.reason());
        }
        state.event(SettlementEvent.Type.CHECKED, row.id(), (byReference ? "by reference: " : "")
                + (answer.refund() != null ? "exists " + answer.refund().id() : answer.kind().name().toLowerCase(Locale.ROOT)));
        if (!answer.gatewayAnswered()) {
            state.event(SettlementEvent.Type.LEFT, row.id(), "sending: the lookup got no answer: " + answer.reason());
        }
        return answer;
    }

    /** Nothing of the claimed row reached the gateway: back to pending, for the next run. */
    void putBack(String refundId, String why) throws SQLException {
        writes.putBack(refundId);
        state.event(SettlementEvent.Type.LEFT, refundId, "pending: " + why);
    }

    private void confirm(RefundRow row, GatewayRefund refund, InFlightSlots.ConfirmGate gate) throws SQLException {
        state.event(SettlementEvent.Type.GATEWAY, row.id(), refund.id());
        hook.reached(SettlementWorker.Phase.AFTER_GATEWAY, row.id());
        if (!state.stillHeld(row.id())) {
            return;
        }
        hook.reached(SettlementWorker.Phase.BEFORE_CONFIRM, row.id());
        Optional<FencedException> refusal;
        if (gate != null) {
            gate.enter();
        }
        long asked = System.nanoTime();
        try {
            refusal = confirmations.confirm(row.id(), refund.id());
        } catch (RuntimeException | SQLException e) {
            // The row stays sending, for the next holder to look up: its refund was made.
            if (state.databaseWaited(row.id(), "confirm of " + row.id(), e, System.nanoTime() - asked)) {
                return;
            }
            throw e;
        } finally {
            if (gate != null) {
                gate.leave();
            }
        }
        if (refusal.isPresent()) {
            state.refused(row.id(), refusal.get());
            return;
        }
        state.confirmed(row.id(), refund.id());
    }
}
