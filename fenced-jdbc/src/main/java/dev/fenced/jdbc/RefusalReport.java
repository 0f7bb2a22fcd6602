package dev.fenced.jdbc;

import dev.fenced.FenceViolation;
import dev.fenced.FencedException;
import dev.fenced.FencedObserver;
import dev.fenced.LogKeys;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * How {@link FencedRows} tells of refused writes: one log line per write or batch (the first
 * violation, and how many), and each violation to the observer, for metrics. It tells; it does not
 * decide what a refusal means. Immutable and thread-safe.
 */
final class RefusalReport {
    /** Under {@link FencedRows}'s name: the log category an application already configures. */
    private static final Logger LOG = LoggerFactory.getLogger(FencedRows.class);

    private final FencedObserver observer;

    RefusalReport(FencedObserver observer) {
        this.observer = observer;
    }

    /** Logs the refusals of one {@code operation} (one line for a batch), tells the observer of each violation, and returns them. */
    Map<Object, FencedException> report(String operation, long token, Map<Object, FencedException> refusals) {
        FenceViolation first = null;
        int violations = 0;
        for (FencedException refusal : refusals.values()) {
            if (refusal instanceof FenceViolation violation) {
                observer.fenceViolation(operation, violation);
                first = first == null ? violation : first;
                violations++;
            }
        }
        if (first != null) {
            try (MDC.MDCCloseable t = MDC.putCloseable(LogKeys.TOKEN, Long.toString(token));
                 MDC.MDCCloseable r = MDC.putCloseable(LogKeys.ROW, String.valueOf(first.rowId()))) {
                LOG.warn("fenced {} refused{}: {}", operation, violations == 1 ? "" : " for " + violations + " rows, the first",
                        first.getMessage());
            }
        }
        return refusals;
    }
}
