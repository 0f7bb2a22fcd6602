package dev.fenced.lab;

import dev.fenced.cli.EventLine;
import dev.fenced.fleet.JobEvent;
import dev.fenced.settlement.SettlementEvent;
import java.util.EnumSet;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The questions the lab's harnesses ask of a worker's {@link EventLine}s: which kind of event it
 * is (a settlement event, a result, a fleet worker's answer to a job), about which refund, under
 * which token. Fields a kind of line does not carry read as null or 0.
 */
final class Events {
    private Events() {
    }

    /** Settlement events of one of these types. */
    static Predicate<EventLine> ofType(SettlementEvent.Type first, SettlementEvent.Type... more) {
        Set<SettlementEvent.Type> types = EnumSet.of(first, more);
        return line -> line instanceof EventLine.Event event && types.contains(event.type());
    }

    /** Settlement events about this refund. */
    static Predicate<EventLine> about(String refund) {
        return line -> line instanceof EventLine.Event event && refund.equals(event.refund());
    }

    /** A fleet worker's answers to a job's delivery, of one of these types. */
    static Predicate<EventLine> ofJob(JobEvent.Type first, JobEvent.Type... more) {
        Set<JobEvent.Type> types = EnumSet.of(first, more);
        return line -> line instanceof EventLine.Job job && types.contains(job.type());
    }

    static boolean isResult(EventLine line) {
        return line instanceof EventLine.Result;
    }

    /** The name the line goes by in timelines: an event's or a job answer's wire name, or {@code result} / {@code ready}. */
    static String name(EventLine line) {
        if (line instanceof EventLine.Event event) {
            return event.type().wireName();
        }
        if (line instanceof EventLine.Job job) {
            return job.type().wireName();
        }
        return line instanceof EventLine.Result ? "result" : "ready";
    }

    /** The worker's token on an event or a result; 0 on a ready line. */
    static long token(EventLine line) {
        if (line instanceof EventLine.Event event) {
            return event.token();
        }
        return line instanceof EventLine.Result result ? result.token() : 0;
    }

    /** The merchant an event or a result is about; null on a ready line. */
    static String merchant(EventLine line) {
        if (line instanceof EventLine.Event event) {
            return event.merchant();
        }
        if (line instanceof EventLine.Job job) {
            return job.merchant();
        }
        return line instanceof EventLine.Result result ? result.merchant() : null;
    }

    /** The refund an event is about; null on other lines. */
    static String refund(EventLine line) {
        return line instanceof EventLine.Event event ? event.refund() : null;
    }
}
