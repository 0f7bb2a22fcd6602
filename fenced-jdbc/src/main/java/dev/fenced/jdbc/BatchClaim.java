package dev.fenced.jdbc;

import dev.fenced.FencedException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a batch claim did: the ids claimed under the token, and for each refused id why: a
 * {@link dev.fenced.FenceViolation} carrying what the row holds (owned by a higher token, or
 * already done), or a {@link RowNotFoundException}.
 *
 * <p>The claimed rows stay claimed whatever the caller does next. The article's rule is to abort
 * the batch on any refusal: call {@link #requireAll()}; inside a transaction, roll back to undo
 * the claims, otherwise the next holder takes them over.
 */
public record BatchClaim(long token, List<Object> claimed, Map<Object, FencedException> refusals)
        implements BatchRefusals {
    public BatchClaim {
        claimed = List.copyOf(claimed);
        refusals = Collections.unmodifiableMap(new LinkedHashMap<>(refusals));
    }

    /** True when every id was claimed. */
    public boolean allClaimed() {
        return refusals.isEmpty();
    }

    /**
     * Returns this when every id was claimed.
     *
     * @throws BatchRefusedException naming the refused ids otherwise
     */
    public BatchClaim requireAll() {
        if (!refusals.isEmpty()) {
            throw new BatchRefusedException(this);
        }
        return this;
    }
}
