package dev.fenced.jdbc;

import java.util.List;

/**
 * What a batch claim did: the ids claimed under the token and the ids refused. A refused id is
 * owned by a higher token, already done, or missing.
 *
 * <p>The claimed rows stay claimed whatever the caller does next. The article's rule is to abort
 * the batch on any refusal: call {@link #requireAll()}; inside a transaction, roll back to undo
 * the claims, otherwise the next holder takes them over.
 */
public record BatchClaim(long token, List<Object> claimed, List<Object> refused) {
    public BatchClaim {
        claimed = List.copyOf(claimed);
        refused = List.copyOf(refused);
    }

    /** True when every id was claimed. */
    public boolean allClaimed() {
        return refused.isEmpty();
    }

    /**
     * Returns this when every id was claimed.
     *
     * @throws BatchRefusedException naming the refused ids otherwise
     */
    public BatchClaim requireAll() {
        if (!refused.isEmpty()) {
            throw new BatchRefusedException(this);
        }
        return this;
    }
}
