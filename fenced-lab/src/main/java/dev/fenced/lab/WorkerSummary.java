package dev.fenced.lab;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * How one worker process of the worked example ended: its token, its outcome and exit code, how
 * many confirms it made and how many of its writes were stale yet accepted.
 *
 * @param outcome the worker's result in camel case ({@code FenceViolation}), or {@code NoResult} when it printed none
 * @param storedFence the fence the refused row held; present only when a write was refused
 * @param refusedAt the refund whose write was refused; present only when one was
 */
@JsonPropertyOrder({"token", "outcome", "storedFence", "refusedAt", "confirmed", "staleWritesAccepted", "exitCode"})
record WorkerSummary(long token, String outcome, @JsonInclude(JsonInclude.Include.NON_NULL) Long storedFence,
                     @JsonInclude(JsonInclude.Include.NON_NULL) String refusedAt, long confirmed, long staleWritesAccepted, int exitCode) {

    WorkerSummary {
        if ((storedFence == null) != (refusedAt == null)) {
            throw new IllegalArgumentException("a refusal has both a row and its stored fence, got " + refusedAt + " / " + storedFence);
        }
    }
}
