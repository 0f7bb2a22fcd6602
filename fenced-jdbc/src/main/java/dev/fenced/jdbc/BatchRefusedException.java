package dev.fenced.jdbc;

import dev.fenced.FencedException;

/** A batch claim was refused for some of its rows; abandon the batch, do not retry it. */
public class BatchRefusedException extends FencedException {
    private final BatchClaim claim;

    public BatchRefusedException(BatchClaim claim) {
        super("batch claim with token " + claim.token() + " refused for " + claim.refused().size() + " of "
                + (claim.refused().size() + claim.claimed().size()) + " rows, first " + claim.refused().get(0));
        this.claim = claim;
    }

    public BatchClaim claim() {
        return claim;
    }
}
