package dev.fenced.lab;

import dev.fenced.cli.SettleCommand;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The worked example end to end, with real worker processes, a real SIGSTOP/SIGCONT pause and
 * embedded real Redis and PostgreSQL, at ten times the article's speed; and its negative control.
 */
class DemoTest {
    private static DemoReport run(Mechanism mechanism) {
        try (ScenarioServers servers = ScenarioServers.embedded(null)) {
            return new Scenario(10, mechanism, Scenario.Story.ARTICLE, null).run(servers);
        }
    }

    @Test
    void withFencingTheStaleConfirmIsRefusedAndEveryRefundIsSentOnce() {
        DemoReport report = run(Mechanism.FENCE_IDEMPOTENT);

        assertThat(report.refunds()).isEqualTo(1200);
        assertThat(report.uniqueReferences()).isEqualTo(1200L);
        assertThat(report.totalAmount()).isEqualTo("84300.00");
        assertThat(report.duplicates()).isZero();
        assertThat(report.stalledRefund()).isEqualTo(new DemoReport.StalledRefund("70.25", 1));
        assertThat(report.staleWritesAccepted()).isZero();
        assertThat(report.fencing()).isTrue();
        assertThat(report.rowsByState()).isEqualTo(Map.of("sent", 1200L));

        WorkerSummary a = report.workerA();
        assertThat(a.token()).isEqualTo(33L);
        assertThat(a.outcome()).isEqualTo("FenceViolation");
        assertThat(a.storedFence()).isEqualTo(34L);
        assertThat(a.refusedAt()).isEqualTo("r_815");
        assertThat(a.exitCode()).isEqualTo(SettleCommand.FENCE_VIOLATION);
        WorkerSummary b = report.workerB();
        assertThat(b.token()).isEqualTo(34L);
        assertThat(b.outcome()).isEqualTo("Completed");
        assertThat(b.exitCode()).isZero();

        assertThat(report.timeline()).anySatisfy(e -> assertThat(e)
                .extracting(TimelineEntry::worker, TimelineEntry::event, TimelineEntry::refund, TimelineEntry::detail)
                .containsExactly("B", "checked", "r_815", "absent"));
        assertThat(report.timeline()).anySatisfy(e -> assertThat(e)
                .extracting(TimelineEntry::worker, TimelineEntry::event, TimelineEntry::refund)
                .containsExactly("A", "violation", "r_815"));
    }

    @Test
    void negativeControl_withoutFencingTheStaleWorkersWriteIsAccepted() {
        DemoReport report = run(Mechanism.FENCE_IDEMPOTENT.withoutFence());

        assertThat(report.staleWritesAccepted() + report.duplicates()).as("the damage the fence prevents must show without it").isPositive();
        assertThat(report.workerA().outcome()).isNotEqualTo("FenceViolation");
        assertThat(report.fencing()).isFalse();
    }
}
