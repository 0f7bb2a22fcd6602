package dev.fenced.lab;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonValue;
import dev.fenced.cli.EventLine;
import dev.fenced.settlement.SettlementEvent.Type;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a chaos run did and found: its settings, the faults injected, the workers' operations
 * counted by type, each exactly-once check with the refunds that break it, and the verdict.
 * Serialized as the {@code chaos --json} document; {@link #table()} is its text form.
 *
 * @param tokens where tokens came from: {@code redis} or {@code database}
 * @param refunds refund rows checked, in every deployment
 * @param workerProcessesStarted worker processes started, replacements of killed ones included
 * @param gatewayRefunds refunds in the gateway's ledger
 * @param drained true when no refund was left pending or sending after the drain
 * @param faults each enabled fault, by its command-line name
 * @param operations worker events counted by type
 * @param checks each check and how many refunds break it
 * @param seconds how long the run took, drain included
 */
@JsonPropertyOrder({"seed", "fencing", "tokens", "merchants", "refunds", "workers", "concurrency", "gatewayLatencyMs",
        "workerProcessesStarted", "gatewayRefunds", "drained", "faults", "operations", "checks", "violations", "verdict", "seconds"})
record ChaosReport(long seed, boolean fencing, String tokens, int merchants, int refunds, int workers, int concurrency, long gatewayLatencyMs,
                   int workerProcessesStarted, int gatewayRefunds, boolean drained, Map<String, Injected> faults,
                   Map<String, Long> operations, Map<String, Long> checks, long violations, String verdict, double seconds) {
    /** The event types the operations table counts, in its order. */
    private static final List<Type> OPERATIONS = List.of(Type.ACQUIRED, Type.BUSY, Type.CLAIMED, Type.GATEWAY, Type.CONFIRMED, Type.SKIPPED,
            Type.LEFT, Type.GATEWAY_DOWN, Type.VIOLATION, Type.FAILED, Type.LEASE_LOST, Type.ERROR);

    ChaosReport {
        faults = Collections.unmodifiableMap(new LinkedHashMap<>(faults));
        operations = Collections.unmodifiableMap(new LinkedHashMap<>(operations));
        checks = Collections.unmodifiableMap(new LinkedHashMap<>(checks));
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
        Map<String, Injected> out = new LinkedHashMap<>();
        for (Fault fault : Fault.values()) {
            if (settings.faults().contains(fault)) {
                out.put(fault.label(), fault == Fault.GATEWAY ? Injected.perRequest("per request: 4% before, 4% after, 1% slow")
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
        return out;
    }

    /** The report as text: a header line, then the faults, operations and checks tables, then the verdict. */
    String table() {
        StringBuilder out = new StringBuilder();
        out.append(String.format("fenced chaos: seed %s, fencing %s, tokens from %s, %s merchants, %s refunds, %s workers (%s processes started), %.0f s%n%n",
                seed, fencing ? "on" : "OFF", tokens, merchants, refunds, workers, workerProcessesStarted, seconds));
        out.append(String.format("%-16s %s%n", "fault", "injected"));
        faults.forEach((k, v) -> out.append(String.format("%-16s %s%n", k, v)));
        out.append(String.format("%n%-16s %s%n", "operation", "count"));
        operations.forEach((k, v) -> out.append(String.format("%-16s %s%n", k, v)));
        out.append(String.format("%n%-75s %s%n", "check", "violations"));
        checks.forEach((k, v) -> out.append(String.format("%-75s %s%n", k, v)));
        out.append(String.format("%n%s%n", verdict));
        return out.toString();
    }
}
