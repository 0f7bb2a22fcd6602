package dev.fenced.jdbc;

import dev.fenced.FencedException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a batch confirm did: the ids confirmed under the token, and for each refused id why: a
 * {@link dev.fenced.FenceViolation} carrying what the row holds now, or a
 * {@link RowNotFoundException}.
 *
 * <p>Any refusal means a higher token owns a row this holder claimed: stop, and do not retry.
 */
public record BatchConfirm(long token, List<Object> confirmed, Map<Object, FencedException> refusals)
        implements BatchRefusals {
    public BatchConfirm {
        confirmed = List.copyOf(confirmed);
        refusals = Collections.unmodifiableMap(new LinkedHashMap<>(refusals));
    }

    /** True when every id was confirmed. */
    public boolean allConfirmed() {
        return refusals.isEmpty();
    }

    /**
     * Returns this when every id was confirmed.
     *
     * @throws FencedException the first refusal otherwise: a {@link dev.fenced.FenceViolation}, as a single confirm would throw
     */
    public BatchConfirm requireAll() {
        if (!refusals.isEmpty()) {
            throw refusals.values().iterator().next();
        }
        return this;
    }
}
