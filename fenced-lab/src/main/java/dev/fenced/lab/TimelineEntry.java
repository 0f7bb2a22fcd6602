package dev.fenced.lab;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * One line of a run's timeline: a worker's event, or a note of the orchestrator's (worker {@code demo})
 * such as a signal sent.
 *
 * @param elapsedMs milliseconds since the run began
 * @param event the event's wire name ({@code claimed}, {@code result}...), or the note's text
 * @param refund the refund concerned, or null
 * @param token the worker's token, 0 when none applies
 * @param detail the event's detail, or null
 */
@JsonPropertyOrder({"elapsedMs", "worker", "event", "refund", "token", "detail"})
record TimelineEntry(long elapsedMs, String worker, String event, String refund, long token, String detail) {
    static final String ORCHESTRATOR = "demo";

    boolean isNote() {
        return ORCHESTRATOR.equals(worker);
    }
}
