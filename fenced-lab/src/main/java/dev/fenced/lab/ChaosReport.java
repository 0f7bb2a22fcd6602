package dev.fenced.lab;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonValue;
import dev.fenced.cli.EventLine;
import dev.fenced.fleet.JobEvent;
import dev.fenced.settlement.SettlementEvent.Type;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a chaos run did and found: its settings, what became of its jobs on the broker, the faults
 * injected, the workers' operations counted by type, each exactly-once check with the refunds that
 * break it, and the verdict.
 * Serialized as the {@code chaos --json} document; {@link #table()} is its text form.
 *
 * @param trustKeys whether the workers trusted the gateway's keys for a day: the key-expiry's negative control
 * @param tokens where tokens came from: {@code redis} or {@code database}
 * @param refunds refund rows checked, in every deployment
 * @param workerProcessesStarted worker processes started, replacements of killed ones included
 * @param gatewayRefunds refunds in the gateway's ledger
 * @param drained true when no refund was left pending or sending after the drain
 * @param jobs what became of the jobs on JetStream, in every deployment
 * @param faults each enabled fault, by its command-line name
 * @param partitions each partition made, in order: worker, link, direction, when, how long
 * @param operations worker events (settlement events, then the fleet's answers to jobs) counted by type
 * @param checks each check and how many refunds break it
 * @param seconds how long the run took, drain included
 */
@JsonPropertyOrder({"seed", "fencing", "trustKeys", "tokens", "merchants", "refunds", "workers", "concurrency", "gatewayLatencyMs",
        "workerProcessesStarted", "gatewayRefunds", "drained", "jobs", "faults", "partitions", "operations", "checks", "violations", "verdict", "seconds"})
record ChaosReport(long seed, boolean fencing, boolean trustKeys, String tokens, int merchants, int refunds, int workers, int concurrency, long gatewayLatencyMs,
                   int workerProcessesStarted, int gatewayRefunds, boolean drained, Jobs jobs, Map<String, Injected> faults,
                   List<String> partitions, Map<String, Long> operations, Map<String, Long> checks, long violations, String verdict, double seconds) {
    /** The event types the operations table counts, in its order. */
    private static final List<Type> OPERATIONS = List.of(Type.ACQUIRED, Type.BUSY, Type.CLAIMED, Type.GATEWAY, Type.CONFIRMED, Type.SKIPPED,
            Type.LEFT, Type.GATEWAY_DOWN, Type.VIOLATION, Type.FAILED, Type.LEASE_LOST, Type.ERROR, Type.DATABASE_WAIT);

    /** The fleet's answers to jobs the operations table counts, after the settlement events. */
    private static final List<JobEvent.Type> JOB_OPERATIONS = List.of(JobEvent.Type.values());

    ChaosReport {
        faults = Collections.unmodifiableMap(new LinkedHashMap<>(faults));
        partitions = List.copyOf(partitions);
        operations = Collections.unmodifiableMap(new LinkedHashMap<>(operations));
        checks = Collections.unmodifiableMap(new LinkedHashMap<>(checks));
    }

    /**
     * What became of the jobs on the broker, read from the streams at the end.
     *
     * @param published jobs published: one per merchant, and the second jobs clock-jump publishes
     * @param acked jobs a worker finished and acked
     * @param deadLettered jobs in the dead letters
     * @param redelivered deliveries beyond each job's first: every one of them JetStream's
     * @param deliveries deliveries in all, as the stream's consumer counts them
     * @param unfinished jobs still queued or in progress when the run ended
     * @param lost jobs gone from the stream that no worker acked and the dead letters do not hold
     */
    @JsonPropertyOrder({"published", "acked", "deadLettered", "redelivered", "deliveries", "unfinished", "lost"})
    record Jobs(int published, int acked, int deadLettered, long redelivered, long deliveries, int unfinished, int lost) {
        Jobs plus(Jobs other) {
            return new Jobs(published + other.published, acked + other.acked, deadLettered + other.deadLettered,
                    redelivered + other.redelivered, deliveries + other.deliveries, unfinished + other.unfinished, lost + other.lost);
        }

        @Override
        public String toString() {
            return String.format("%d published, %d acked, %d dead-lettered, %d redelivered (%d deliveries), %d unfinished, %d lost",
                    published, acked, deadLettered, redelivered, deliveries, unfinished, lost);
        }
    }

    /** How a fault was injected: how many times it struck, or, for the per-request gateway faults, at which rates. */
    record Injected(int count, String rates) {
        static Injected times(int count) {
            return new Injected(count, null);
        }

        static Injected perRequest(String rates) {
            return new Injected(0, rates);
        }

        /** A number, or the rates as text. */
        @JsonValue
        Object json() {
            return rates != null ? rates : count;
        }

        @Override
        public String toString() {
            return String.valueOf(json());
        }
    }

    /** Each enabled fault, in {@link Fault} order, with how it was injected. */
    static Map<String, Injected> faults(ChaosSettings settings, Map<Fault, Integer> injected) {
        return faults(settings, injected, Map.of());
    }

    /** @param told what a fault did, as text, for those that say it (provider-news, key-expiry) */
    static Map<String, Injected> faults(ChaosSettings settings, Map<Fault, Integer> injected, Map<Fault, String> told) {
        Map<String, Injected> out = new LinkedHashMap<>();
        for (Fault fault : Fault.values()) {
            if (settings.faults().contains(fault)) {
                out.put(fault.label(), fault == Fault.GATEWAY ? Injected.perRequest("per request: 4% before, 4% after, 1% slow")
                        : told.containsKey(fault) ? Injected.perRequest(told.get(fault))
                        : Injected.times(injected.getOrDefault(fault, 0)));
            }
        }
        return out;
    }

    /** The workers' events counted by type, by wire name. */
    static Map<String, Long> operations(List<EventLine> history) {
        Map<String, Long> out = new LinkedHashMap<>();
        for (Type type : OPERATIONS) {
            out.put(type.wireName(), history.stream().filter(Events.ofType(type)).count());
        }
        for (JobEvent.Type type : JOB_OPERATIONS) {
            out.put(type.wireName(), history.stream().filter(Events.ofJob(type)).count());
        }
        return out;
    }

    /** The report as text: a header line, the jobs, then the faults, operations and checks tables, then the verdict. */
    String table() {
        StringBuilder out = new StringBuilder();
        out.append(String.format("fenced chaos: seed %s, fencing %s%s, tokens from %s, %s merchants, %s refunds, %s workers (%s processes started), %.0f s%n%n",
                seed, fencing ? "on" : "OFF", trustKeys ? ", workers trusting keys for a day" : "", tokens, merchants, refunds, workers, workerProcessesStarted, seconds));
        out.append(String.format("jobs: %s%n%n", jobs));
        out.append(String.format("%-16s %s%n", "fault", "injected"));
        faults.forEach((k, v) -> out.append(String.format("%-16s %s%n", k, v)));
        if (!partitions.isEmpty()) {
            out.append(String.format("%npartitions%n"));
            partitions.forEach(p -> out.append(String.format("  %s%n", p)));
        }
        out.append(String.format("%n%-18s %s%n", "operation", "count"));
        operations.forEach((k, v) -> out.append(String.format("%-18s %s%n", k, v)));
        out.append(String.format("%n%-75s %s%n", "check", "violations"));
        checks.forEach((k, v) -> out.append(String.format("%-75s %s%n", k, v)));
        out.append(String.format("%n%s%n", verdict));
        return out.toString();
    }
}
