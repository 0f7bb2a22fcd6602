package dev.fenced.settlement;

import dev.fenced.FenceViolation;
import java.util.Objects;

/**
 * How one settlement run ended. Built by name ({@link #builder}, or {@link #noRefunds},
 * {@link #leaseBusy} and {@link #failedToStart} for runs that did nothing); immutable. It reports what the
 * run saw; it does not say what another holder did after the run ended.
 *
 * @param result how the run ended
 * @param merchant the merchant settled
 * @param token the token the worker held, 0 when it took no lease
 * @param sent refunds this run confirmed
 * @param recovered of those, refunds found in {@code sending} that the gateway already had
 * @param failed refunds marked failed on a definitive refusal, or on a gateway refund that did not match the row
 * @param skipped refunds an earlier holder finished (sent or failed) after this run read them
 * @param left refunds this run read and left pending or sending for the next run
 * @param violation the refusal that ended the run, or null
 * @param error what stopped a {@link Result#FAILED} run (or which refunds it left for an operator and why), or the wait
 *     that stopped a {@link Result#DATABASE_WAIT} run; null otherwise
 * @param stale true when the run's lease was already gone when it ended (expired or taken over):
 *     another holder may own the merchant now, and whatever handed this run its work should let
 *     that holder decide
 * @param failedElsewhere of the skipped, refunds the earlier holder marked {@code failed}: refused, not paid, so the run is
 *     {@link Result#REJECTED} and not {@link Result#COMPLETED}
 */
public record SettlementOutcome(Result result, String merchant, long token, int sent, int recovered, int failed, int skipped,
                                int left, FenceViolation violation, String error, boolean stale, int failedElsewhere) {

    public SettlementOutcome {
        Objects.requireNonNull(result, "result");
    }

    /** Starts an outcome of {@code result} for {@code merchant}: no token, nothing counted, no violation, no error, not stale. */
    public static Builder builder(Result result, String merchant) {
        return new Builder(result, merchant);
    }

    /** The merchant has no refund rows at all: found before any lease was taken. */
    public static SettlementOutcome noRefunds(String merchant) {
        return builder(Result.NO_REFUNDS, merchant).error("no refunds for merchant " + merchant).build();
    }

    /** Another holder's lease was live: nothing was done. */
    public static SettlementOutcome leaseBusy(String merchant) {
        return builder(Result.LEASE_BUSY, merchant).build();
    }

    /** A run that could not start, e.g. its worker could not be built. */
    public static SettlementOutcome failedToStart(String merchant, String error) {
        return builder(Result.FAILED, merchant).error(error).build();
    }

    /** Builds a {@link SettlementOutcome}; every count starts at 0, the violation and error at null. Not thread-safe. */
    public static final class Builder {
        private final Result result;
        private final String merchant;
        private long token;
        private int sent;
        private int recovered;
        private int failed;
        private int skipped;
        private int left;
        private FenceViolation violation;
        private String error;
        private boolean stale;
        private int failedElsewhere;

        private Builder(Result result, String merchant) {
            this.result = Objects.requireNonNull(result, "result");
            this.merchant = merchant;
        }

        public Builder token(long token) {
            this.token = token;
            return this;
        }

        public Builder sent(int sent) {
            this.sent = sent;
            return this;
        }

        public Builder recovered(int recovered) {
            this.recovered = recovered;
            return this;
        }

        public Builder failed(int failed) {
            this.failed = failed;
            return this;
        }

        public Builder skipped(int skipped) {
            this.skipped = skipped;
            return this;
        }

        public Builder left(int left) {
            this.left = left;
            return this;
        }

        public Builder violation(FenceViolation violation) {
            this.violation = violation;
            return this;
        }

        public Builder error(String error) {
            this.error = error;
            return this;
        }

        public Builder stale(boolean stale) {
            this.stale = stale;
            return this;
        }

        public Builder failedElsewhere(int failedElsewhere) {
            this.failedElsewhere = failedElsewhere;
            return this;
        }

        public SettlementOutcome build() {
            return new SettlementOutcome(result, merchant, token, sent, recovered, failed, skipped, left, violation, error, stale,
                    failedElsewhere);
        }
    }

    /** How a run ended; the command line maps each to its exit code. */
    public enum Result {
        /** Every refund that was pending or sending when the run began is now sent (by this run or an earlier holder). */
        COMPLETED,
        /**
         * Every refund has a definitive answer, but some ended {@code failed}: the gateway refused them (marked failed with
         * the reason), by this run or by an earlier holder that finished them after this run read them. Not a success: a
         * failed refund is money not paid, and needs an operator ({@code fenced reconcile}).
         */
        REJECTED,
        /**
         * The gateway was unreachable or left outcomes in doubt: the worker stopped claiming and left
         * refunds pending or sending (never failed) for the next run, which looks each one up first.
         */
        GATEWAY_UNAVAILABLE,
        /** A fenced write was refused: another holder owns the merchant now; the batch was abandoned. */
        FENCE_VIOLATION,
        /** Another holder's lease was live; nothing was done. */
        LEASE_BUSY,
        /** The watchdog found the lease gone; the run stopped claiming and ended early. */
        LEASE_LOST,
        /** Asked to stop (a draining process): what was in flight finished, the rest is left pending or sending for the next run. */
        STOPPED,
        /**
         * The merchant has no refund rows at all (a mistyped id?): found before any lease was taken
         * or any key written. A merchant whose rows are all settled is {@link #COMPLETED}.
         */
        NO_REFUNDS,
        /**
         * An unexpected error (database or Redis unreachable) stopped the run; or the run settled
         * what it could and left refunds it must not send as they are, for an operator: an amount
         * with more decimals than its currency has (JPY 1.50), an unknown currency. {@code error} says which.
         */
        FAILED,
        /**
         * A bound on a database wait ran out (a row lock another session held, typically a holder
         * stalled inside its claim transaction; or a statement's time limit): the run stopped
         * claiming, finished what was in flight, put the rows it claimed but never sent back to
         * {@code pending} and released its lease; the statement that waited changed nothing.
         * {@link SettlementOutcome#error()} names the rows and the wait. Try again later.
         */
        DATABASE_WAIT
    }
}
