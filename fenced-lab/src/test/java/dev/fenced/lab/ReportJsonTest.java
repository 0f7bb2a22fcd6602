package dev.fenced.lab;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fenced.cli.EventLine;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.settlement.SettlementEvent.Type;
import dev.fenced.settlement.SettlementOutcome;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The lab's reports keep the JSON format the maps they replaced had: the same property names in
 * the same order, the refusal fields only when there was a refusal. No servers: the demo's report
 * is tallied from made-up event lines and ledger.
 */
class ReportJsonTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long T0 = 1_700_000_000_000L;
    private static final Scenario.Story STORY = new Scenario.Story(12, new BigDecimal("843.00")); // stalled at r_008

    private static final List<String> DEMO_FIELDS = List.of("mechanism", "label", "fencing", "speed", "refunds", "uniqueReferences",
            "totalAmount", "duplicates", "r815", "staleWritesAccepted", "lostOrStuck", "settledArticleSeconds", "workerA", "workerB",
            "rowsByState", "pausedAtMs", "resumedAtMs", "staleWrites", "duplicateRefunds", "timeline");

    private static EventLine event(Type type, String worker, String refund, long token, String detail, long at) {
        return new EventLine.Event(type, worker, Scenario.MERCHANT, refund, token, detail, T0 + at, 1);
    }

    /** A frozen on r_008 after claiming it, B takes over at 400 ms, A wakes, confirms r_001 again (stale) and is refused on r_008. */
    private static DemoReport tally(Mechanism mechanism) {
        List<EventLine> a = List.of(
                event(Type.ACQUIRED, "A", null, 33, "settle:m_4471", 100),
                event(Type.CLAIMED, "A", "r_001", 33, null, 110),
                event(Type.CLAIMED, "A", "r_002", 33, null, 120),
                event(Type.CLAIMED, "A", "r_008", 33, null, 200),
                event(Type.BREAKPOINT, "A", "r_008", 33, "after-claim:r_008", 201),
                event(Type.CONFIRMED, "A", "r_001", 33, "gw_1", 900),
                event(Type.VIOLATION, "A", "r_008", 33, "stored fence 34, state sent", 910),
                new EventLine.Result("A", Scenario.MERCHANT, SettlementOutcome.Result.FENCE_VIOLATION, 33, 1, 0, 0, 0, 11, "r_008", 34L,
                        "sent", null, T0 + 920));
        List<EventLine> b = List.of(
                event(Type.ACQUIRED, "B", null, 34, "settle:m_4471", 400),
                event(Type.CHECKED, "B", "r_008", 34, "absent", 410),
                event(Type.CONFIRMED, "B", "r_008", 34, "gw_8", 420),
                new EventLine.Result("B", Scenario.MERCHANT, SettlementOutcome.Result.COMPLETED, 34, 11, 0, 0, 0, 0, null, null, null, null,
                        T0 + 1_000));
        List<GatewayRefund> ledger = new ArrayList<>();
        for (int i = 1; i <= 12; i++) {
            String id = String.format("r_%03d", i);
            ledger.add(new GatewayRefund("gw_" + i, "k_" + i, id, Scenario.MERCHANT, new BigDecimal("70.25"), "EUR", T0 + 100 + i));
        }
        ledger.add(new GatewayRefund("gw_13", "k_1", "r_001", Scenario.MERCHANT, new BigDecimal("70.25"), "EUR", T0 + 905));
        List<TimelineEntry> notes = List.of(new TimelineEntry(0, TimelineEntry.ORCHESTRATOR, "seeded", null, 0, null),
                new TimelineEntry(205, TimelineEntry.ORCHESTRATOR, "SIGSTOP worker A", null, 33, null));
        return new DemoTally(mechanism, 10, STORY, T0).report(ledger, Map.of("sent", 12L), new DemoTally.Worker("A", a, 3),
                new DemoTally.Worker("B", b, 0), T0 + 205, T0 + 850, notes);
    }

    @Test
    void theTallyCountsFromTheLedgerAndTheEventLines() {
        DemoReport report = tally(Mechanism.FENCE);

        assertThat(report.refunds()).isEqualTo(13);
        assertThat(report.uniqueReferences()).isEqualTo(12);
        assertThat(report.duplicates()).isEqualTo(1);
        assertThat(report.totalAmount()).isEqualTo("913.25");
        assertThat(report.stalledRefund()).isEqualTo(new DemoReport.StalledRefund("70.25", 1));
        assertThat(report.staleWrites()).containsExactly(new DemoReport.StaleWrite(900, "confirmed", "r_001"));
        assertThat(report.duplicateRefunds()).extracting(DemoReport.DuplicateRefund::gatewayId).containsExactly("gw_1", "gw_13");
        assertThat(report.workerA()).isEqualTo(new WorkerSummary(33, "FenceViolation", 34L, "r_008", 1, 1, 3));
        assertThat(report.workerB()).isEqualTo(new WorkerSummary(34, "Completed", null, null, 1, 0, 0));
        assertThat(report.settledArticleSeconds()).isEqualTo(10.0);
        assertThat(report.pausedAtMs()).isEqualTo(205);
        assertThat(report.timeline()).extracting(TimelineEntry::elapsedMs).isSorted();
        assertThat(report.timeline()).extracting(TimelineEntry::event)
                .as("milestones, the first claim and everything about r_008; not the second claim nor the confirm of r_001")
                .containsExactly("seeded", "acquired", "claimed", "claimed", "breakpoint", "SIGSTOP worker A", "acquired", "checked",
                        "confirmed", "violation", "result", "result");
        assertThat(report.timeline().get(report.timeline().size() - 2).detail()).isEqualTo("FENCE_VIOLATION, 1 confirmed");
    }

    @Test
    void theDemoReportKeepsTheFieldNamesAndOrderOfTheMapItReplaced() throws Exception {
        JsonNode json = JSON.valueToTree(tally(Mechanism.FENCE));

        assertThat(fieldNames(json)).containsExactlyElementsOf(DEMO_FIELDS);
        assertThat(fieldNames(json.get("workerA")))
                .containsExactly("token", "outcome", "storedFence", "refusedAt", "confirmed", "staleWritesAccepted", "exitCode");
        assertThat(fieldNames(json.get("workerB"))).as("no refusal, no refusal fields")
                .containsExactly("token", "outcome", "confirmed", "staleWritesAccepted", "exitCode");
        assertThat(json.get("workerA").get("storedFence").asLong()).isEqualTo(34);
        assertThat(fieldNames(json.get("r815"))).containsExactlyInAnyOrder("amount", "refunds");
        assertThat(json.get("r815").get("amount").asText()).isEqualTo("70.25");
        assertThat(json.get("staleWritesAccepted").asLong()).isEqualTo(1);
        assertThat(fieldNames(json.get("staleWrites").get(0))).containsExactlyInAnyOrder("elapsedMs", "event", "refund");
        assertThat(fieldNames(json.get("duplicateRefunds").get(0))).containsExactlyInAnyOrder("elapsedMs", "refund", "gatewayId");
        assertThat(fieldNames(json.get("timeline").get(0))).containsExactly("elapsedMs", "worker", "event", "refund", "token", "detail");
        assertThat(json.get("timeline").get(0).get("refund").isNull()).as("absent values are written as null, as before").isTrue();
        assertThat(json.get("rowsByState").get("sent").asLong()).isEqualTo(12);
        assertThat(json.get("speed").asDouble()).isEqualTo(10.0);
    }

    @Test
    void theComparisonReportKeepsItsFieldNamesAndEachRunIsADemoReportWithItsNumberLast() throws Exception {
        DemoReport run = tally(Mechanism.FENCE);
        ComparisonRow row = ComparisonRow.of(Mechanism.FENCE, List.of(run), 29.5);
        JsonNode json = JSON.valueToTree(new ComparisonReport(10, 1, 12, "r_008", List.of(row), List.of(new ComparisonRun(run, 1)),
                ComparisonReport.Environment.of("redis-server 7.0.15", "PostgreSQL 15.19")));

        assertThat(fieldNames(json)).containsExactly("speed", "runs", "refunds", "stalledRefund", "rows", "results", "environment");
        assertThat(fieldNames(json.get("environment"))).containsExactly("fencedVersion", "generatedAt", "redis", "database", "java", "machine");
        assertThat(fieldNames(json.get("rows").get(0))).containsExactly("mechanism", "label", "runs", "doubleRefunds", "runsWithDoubleRefunds",
                "staleWritesAccepted", "runsWithStaleWrites", "lostOrStuck", "settledArticleSeconds", "runsNeverSettled",
                "blockedAfterCrashArticleSeconds", "expected", "verdict");
        List<String> runFields = new ArrayList<>(DEMO_FIELDS);
        runFields.add("run");
        assertThat(fieldNames(json.get("results").get(0))).containsExactlyElementsOf(runFields);
        assertThat(json.get("rows").get(0).get("doubleRefunds").asText()).isEqualTo("1");
        assertThat(row.verdict()).as("a stale write accepted under the fence").startsWith("DIFFERS");
    }

    @Test
    void theChaosReportKeepsItsFieldNamesAndAFaultIsACountOrItsRates() throws Exception {
        ChaosSettings settings = new ChaosSettings(2, 10, 2, 3, 1, Duration.ofMillis(50), Duration.ofSeconds(5), Duration.ofSeconds(1), 7,
                EnumSet.of(Fault.PAUSE, Fault.GATEWAY, Fault.NATS_RESTART), true, dev.fenced.redis.TokenIssuer.EPOCHS, null, null, dev.fenced.cli.LeaseBackend.REDIS, false, false, false);
        List<EventLine> history = List.of(event(Type.ACQUIRED, "w1", null, 1, null, 0), event(Type.LEASE_LOST, "w1", null, 1, null, 5));
        ChaosReport report = new ChaosReport(7, true, false, "redis", 2, 20, 2, 1, 50, 3, 20, true, new ChaosReport.Jobs(2, 1, 1, 3, 5, 0, 0),
                ChaosReport.faults(settings, Map.of(Fault.PAUSE, 4, Fault.NATS_RESTART, 1)),
                List.of("w2 redis both ways at 1.5 s for 2300 ms, holding 1 job"), ChaosReport.operations(history),
                Map.of("refunds created more than once at the gateway", 0L), 0, "exactly once: no violation", 12.5);
        JsonNode json = JSON.valueToTree(report);

        assertThat(fieldNames(json)).containsExactly("seed", "fencing", "trustKeys", "tokens", "merchants", "refunds", "workers", "concurrency",
                "gatewayLatencyMs", "workerProcessesStarted", "gatewayRefunds", "drained", "jobs", "faults", "partitions", "operations", "checks",
                "violations",
                "verdict", "seconds");
        assertThat(fieldNames(json.get("jobs"))).containsExactly("published", "acked", "deadLettered", "redelivered", "deliveries",
                "unfinished", "lost");
        assertThat(json.get("jobs").get("redelivered").asLong()).isEqualTo(3);
        assertThat(json.get("verdict").asText()).isEqualTo("exactly once: no violation");
        assertThat(json.get("partitions").get(0).asText()).isEqualTo("w2 redis both ways at 1.5 s for 2300 ms, holding 1 job");
        assertThat(fieldNames(json.get("faults"))).containsExactly("pause", "gateway", "nats-restart");
        assertThat(json.get("faults").get("nats-restart").asInt()).isEqualTo(1);
        assertThat(json.get("faults").get("pause").isInt()).isTrue();
        assertThat(json.get("faults").get("pause").asInt()).isEqualTo(4);
        assertThat(json.get("faults").get("gateway").asText()).startsWith("per request:");
        assertThat(fieldNames(json.get("operations"))).startsWith("acquired", "busy", "claimed").contains("gateway-down", "lease-lost")
                .endsWith("job-received", "job-acked", "job-retry", "job-handed-back", "job-left", "job-dead-lettered");
        assertThat(json.get("operations").get("lease-lost").asLong()).isEqualTo(1);
        assertThat(report.table()).startsWith("fenced chaos: seed 7, fencing on, tokens from redis, 2 merchants, 20 refunds, 2 workers"
                + " (3 processes started), 13 s").contains(String.format("%-16s %s%n", "pause", "4"))
                .contains("jobs: 2 published, 1 acked, 1 dead-lettered, 3 redelivered (5 deliveries), 0 unfinished, 0 lost");
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
