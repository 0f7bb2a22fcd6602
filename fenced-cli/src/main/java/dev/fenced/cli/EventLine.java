package dev.fenced.cli;

import dev.fenced.fleet.JobEvent;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementOutcome;

/**
 * One line of the JSON-lines protocol a worker prints with {@code --events} and its orchestrator
 * reads: what the worker did, how a run ended, that it can take one more job, or what a fleet
 * worker did with a job's delivery. {@link EventCodec}
 * writes and reads it; nothing else spells its field names.
 */
public sealed interface EventLine permits EventLine.Event, EventLine.Result, EventLine.Ready, EventLine.Job {

    /** The worker's name. */
    String worker();

    /** Wall-clock epoch milliseconds. */
    long at();

    /** Something a settlement worker did. */
    record Event(SettlementEvent.Type type, String worker, String merchant, String refund, long token, String detail, long at, long pid)
            implements EventLine {
    }

    /**
     * How a run ended; the refusal fields are set when it ended on a fence violation.
     *
     * @param refusedAt the row whose write was refused, or null
     * @param storedFence the fence that row held, or null
     * @param storedState the state that row was in, or null
     */
    record Result(String worker, String merchant, SettlementOutcome.Result result, long token, int sent, int recovered, int failed,
                  int skipped, int left, String refusedAt, Long storedFence, String storedState, String error, long at)
            implements EventLine {

        static Result of(SettlementOutcome outcome, String worker, long at) {
            var violation = outcome.violation();
            return new Result(worker, outcome.merchant(), outcome.result(), outcome.token(), outcome.sent(), outcome.recovered(),
                    outcome.failed(), outcome.skipped(), outcome.left(), violation == null ? null : String.valueOf(violation.rowId()),
                    violation == null ? null : violation.storedFence(), violation == null ? null : violation.storedState(),
                    outcome.error(), at);
        }
    }

    /** A long-lived worker can take one more job. */
    record Ready(String worker, long at) implements EventLine {
    }

    /** What a fleet worker did with one delivery of a job (see {@link JobEvent}). */
    record Job(JobEvent.Type type, String worker, String merchant, long sequence, long delivery, String detail, long at, long pid)
            implements EventLine {
    }
}
