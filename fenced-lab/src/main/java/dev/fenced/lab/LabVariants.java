package dev.fenced.lab;

import dev.fenced.settlement.RefundWrites;
import dev.fenced.settlement.WorkerVariant;

/** The worker variants the comparison measures: the article's design with parts taken away. */
final class LabVariants {
    private LabVariants() {
    }

    static WorkerVariant of(boolean fencing, boolean renewal, boolean checkBeforeWrite) {
        if (fencing && renewal && !checkBeforeWrite) {
            return WorkerVariant.ARTICLE;
        }
        RefundWrites writes = fencing ? RefundWrites.fenced() : UnfencedRefundWrites.INSTANCE;
        return new WorkerVariant(writes, renewal, checkBeforeWrite);
    }
}
