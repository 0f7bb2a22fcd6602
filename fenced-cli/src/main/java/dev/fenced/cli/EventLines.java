package dev.fenced.cli;

import dev.fenced.fleet.JobEvent;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementOutcome;

/** Prints a worker's {@link EventLine}s on stdout, one whole line at a time, for its orchestrator to read. */
public final class EventLines {
    private static final long PID = ProcessHandle.current().pid();

    private EventLines() {
    }

    public static void event(SettlementEvent event, String merchant) {
        emit(new EventLine.Event(event.type(), event.worker(), merchant, event.refundId(), event.token(), event.detail(), event.atMillis(), PID));
    }

    public static void result(SettlementOutcome outcome, String worker) {
        emit(EventLine.Result.of(outcome, worker, System.currentTimeMillis()));
    }

    public static void job(JobEvent event, String worker) {
        emit(new EventLine.Job(event.type(), worker, event.merchant(), event.sequence(), event.delivery(), event.detail(), event.atMillis(), PID));
    }

    public static void emit(EventLine line) {
        String text = EventCodec.write(line);
        synchronized (System.out) {
            System.out.println(text);
            System.out.flush();
        }
    }
}
