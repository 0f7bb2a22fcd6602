package dev.fenced.lab;

import dev.fenced.cli.EventLine;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.settlement.SettlementEvent.Type;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Counts what a run of the worked example did, from the gateway's ledger, the merchant's rows and
 * the two workers' event lines, into a {@link DemoReport}. Pure: it reads nothing but its arguments.
 */
final class DemoTally {
    private static final Set<String> MILESTONES = Set.of("acquired", "busy", "checked", "breakpoint", "violation", "lease-lost",
            "released", "result", "error", "failed");

    /** The states of a row the worker confirmed sent. */
    private static final Set<String> CONFIRMED = Set.of("sent", "settled", "returned");

    /** A worker process as the tally sees it once it exited. */
    record Worker(String name, List<EventLine> events, int exitCode) {
        static Worker of(WorkerProcess process, int exitCode) {
            return new Worker(process.name(), List.copyOf(process.events()), exitCode);
        }
    }

    private final Mechanism mechanism;
    private final double speed;
    private final Scenario.Story story;
    private final long startMillis;

    DemoTally(Mechanism mechanism, double speed, Scenario.Story story, long startMillis) {
        this.mechanism = mechanism;
        this.speed = speed;
        this.story = story;
        this.startMillis = startMillis;
    }

    /**
     * @param ledger every refund the gateway created, of any merchant
     * @param rows the merchant's rows counted by state
     * @param pausedAt when A was frozen (epoch milliseconds)
     * @param resumedAt when A was resumed (epoch milliseconds)
     * @param notes the orchestrator's own timeline entries
     */
    DemoReport report(List<GatewayRefund> ledger, Map<String, Long> rows, Worker a, Worker b, long pausedAt, long resumedAt,
                      List<TimelineEntry> notes) {
        String stalled = story.stalledRefund();
        List<GatewayRefund> refunds = ledger.stream().filter(r -> r.merchant().equals(Scenario.MERCHANT)).toList();
        long unique = refunds.stream().map(GatewayRefund::reference).distinct().count();
        List<GatewayRefund> stalledRefunds = refunds.stream().filter(r -> r.reference().equals(stalled)).toList();
        long bAcquiredAt = b.events().stream().filter(Events.ofType(Type.ACQUIRED)).findFirst().map(EventLine::at).orElse(Long.MAX_VALUE);
        // A write from A that the database accepted after B held the lease is a stale write.
        List<DemoReport.StaleWrite> staleWrites = a.events().stream()
                .filter(Events.ofType(Type.CLAIMED, Type.CONFIRMED).and(e -> e.at() > bAcquiredAt))
                .map(e -> new DemoReport.StaleWrite(e.at() - startMillis, Events.name(e), Events.refund(e)))
                .toList();
        // Settled and returned rows were sent first: the provider's news came while the workers ran.
        long notSent = rows.entrySet().stream().filter(e -> !CONFIRMED.contains(e.getKey())).mapToLong(Map.Entry::getValue).sum();
        long missingAtGateway = story.refunds() - unique;
        long settledAt = notSent == 0 ? lastSettledAt(a, b) - startMillis : -1;
        Map<String, Long> perReference = refunds.stream().collect(Collectors.groupingBy(GatewayRefund::reference, Collectors.counting()));
        List<DemoReport.DuplicateRefund> duplicates = refunds.stream().filter(r -> perReference.get(r.reference()) > 1)
                .map(r -> new DemoReport.DuplicateRefund(r.createdAt() - startMillis, r.reference(), r.id())).toList();

        return new DemoReport(mechanism.key(), mechanism.label(), mechanism.fencing(), speed, refunds.size(), unique,
                sum(refunds).toPlainString(), refunds.size() - unique,
                new DemoReport.StalledRefund(sum(stalledRefunds).toPlainString(), stalledRefunds.size()),
                staleWrites.size(), Math.max(notSent, missingAtGateway), settledAt < 0 ? null : Scenario.articleSeconds(settledAt, speed),
                summary(a, staleWrites.size()), summary(b, 0), rows, pausedAt - startMillis, resumedAt - startMillis,
                staleWrites, duplicates, timeline(a, b, notes), null);
    }

    private static BigDecimal sum(List<GatewayRefund> refunds) {
        return refunds.stream().map(GatewayRefund::amount).reduce(BigDecimal.ZERO, BigDecimal::add).setScale(2);
    }

    private static long lastSettledAt(Worker a, Worker b) {
        return List.of(a, b).stream().flatMap(w -> w.events().stream())
                .filter(Events.ofType(Type.CONFIRMED).or(Events::isResult)).mapToLong(EventLine::at).max().orElse(0);
    }

    private static WorkerSummary summary(Worker worker, long staleWrites) {
        EventLine.Result result = worker.events().stream().filter(EventLine.Result.class::isInstance).map(EventLine.Result.class::cast)
                .findFirst().orElse(null);
        long confirmed = worker.events().stream().filter(Events.ofType(Type.CONFIRMED)).count();
        if (result == null) {
            return new WorkerSummary(0, "NoResult", null, null, confirmed, staleWrites, worker.exitCode());
        }
        Long storedFence = result.refusedAt() == null ? null : result.storedFence() == null ? 0L : result.storedFence();
        return new WorkerSummary(result.token(), camel(result.result().name()), storedFence, result.refusedAt(), confirmed, staleWrites,
                worker.exitCode());
    }

    /** The notes and each worker's milestones, its first claim and everything about the stalled refund, in time order. */
    private List<TimelineEntry> timeline(Worker a, Worker b, List<TimelineEntry> notes) {
        String stalled = story.stalledRefund();
        List<TimelineEntry> entries = new ArrayList<>(notes);
        for (Worker worker : List.of(a, b)) {
            boolean firstClaim = true;
            for (EventLine e : worker.events()) {
                String name = Events.name(e);
                boolean claim = name.equals(Type.CLAIMED.wireName());
                if (MILESTONES.contains(name) || stalled.equals(Events.refund(e)) || (claim && firstClaim)) {
                    String detail = e instanceof EventLine.Result r ? r.result() + ", " + r.sent() + " confirmed"
                            : e instanceof EventLine.Event event ? event.detail() : null;
                    entries.add(new TimelineEntry(e.at() - startMillis, worker.name(), name, Events.refund(e), Events.token(e), detail));
                }
                firstClaim &= !claim;
            }
        }
        entries.sort(Comparator.comparingLong(TimelineEntry::elapsedMs));
        return entries;
    }

    static String camel(String result) {
        StringBuilder out = new StringBuilder();
        for (String part : result.toLowerCase(Locale.ROOT).split("_")) {
            out.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
        }
        return out.toString();
    }
}
