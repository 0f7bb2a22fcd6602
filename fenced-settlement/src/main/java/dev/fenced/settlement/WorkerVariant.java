package dev.fenced.settlement;

import java.util.Objects;

/**
 * What a comparison of mechanisms changes in a {@link SettlementWorker}: the writes it makes on
 * refund rows, whether it renews its lease in the background, and whether it reads the lease back
 * before every write. A worker is built with {@link #ARTICLE}, the design the article argues for,
 * unless told otherwise; nothing in this module or in the operator's command line builds another.
 * The lab (module {@code fenced-lab}) owns the weaker variants and uses them only to measure what
 * each one loses. A variant whose writes do not check the token gives up mutual exclusion.
 */
public record WorkerVariant(RefundWrites writes, boolean renewal, boolean checkBeforeWrite) {
    /** Fenced writes, background renewal, no read-back: the read-back proves nothing the fence does not. */
    public static final WorkerVariant ARTICLE = new WorkerVariant(RefundWrites.fenced(), true, false);

    public WorkerVariant {
        Objects.requireNonNull(writes, "writes");
    }
}
