package dev.fenced.settlement;

import dev.fenced.FenceViolation;

/**
 * How one settlement run ended.
 *
 * @param token the token the worker held, 0 when it took no lease
 * @param sent refunds this run confirmed
 * @param recovered of those, refunds found in {@code sending} that the gateway already had
 * @param failed refunds marked failed after the gateway kept failing
 * @param violation the refusal that ended the run, or null
 * @param error what stopped a {@link Result#FAILED} run, or null
 */
public record SettlementOutcome(Result result, String merchant, long token, int sent, int recovered, int failed,
                                FenceViolation violation, String error) {

    public enum Result {
        /** Every refund that was pending or sending when the run began is now sent or failed. */
        COMPLETED,
        /** A fenced write was refused: another holder owns the merchant now; the batch was abandoned. */
        FENCE_VIOLATION,
        /** Another holder's lease was live; nothing was done. */
        LEASE_BUSY,
        /** The watchdog found the lease gone; the run stopped claiming and ended early. */
        LEASE_LOST,
        /** An unexpected error (database or Redis unreachable) stopped the run. */
        FAILED
    }
}
