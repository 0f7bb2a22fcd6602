package dev.fenced.lab;

import dev.fenced.cli.SettleCommand;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The worked example end to end, with real worker processes, a real SIGSTOP/SIGCONT pause and
 * embedded real Redis and PostgreSQL, at ten times the article's speed; and its negative control.
 */
class DemoTest {
    private static Map<String, Object> run(Mechanism mechanism) {
        try (Scenario.Servers servers = Scenario.Servers.start(null, null, null)) {
            return new Scenario(10, mechanism, Scenario.Story.ARTICLE, null).run(servers);
        }
    }

    @Test
    void withFencingTheStaleConfirmIsRefusedAndEveryRefundIsSentOnce() {
        Map<String, Object> report = run(Mechanism.FENCE_IDEMPOTENT);

        assertThat(report.get("refunds")).isEqualTo(1200);
        assertThat(report.get("uniqueReferences")).isEqualTo(1200L);
        assertThat(report.get("totalAmount")).isEqualTo("84300.00");
        assertThat(report.get("duplicates")).isEqualTo(0L);
        assertThat(report.get("r815")).isEqualTo(Map.of("refunds", 1, "amount", "70.25"));
        assertThat(report.get("staleWritesAccepted")).isEqualTo(0L);
        assertThat(report.get("fencing")).isEqualTo(true);
        assertThat(report.get("rowsByState")).isEqualTo(Map.of("sent", 1200L));

        Map<?, ?> a = (Map<?, ?>) report.get("workerA");
        assertThat(a.get("token")).isEqualTo(33L);
        assertThat(a.get("outcome")).isEqualTo("FenceViolation");
        assertThat(a.get("storedFence")).isEqualTo(34L);
        assertThat(a.get("refusedAt")).isEqualTo("r_815");
        assertThat(a.get("exitCode")).isEqualTo(SettleCommand.FENCE_VIOLATION);
        Map<?, ?> b = (Map<?, ?>) report.get("workerB");
        assertThat(b.get("token")).isEqualTo(34L);
        assertThat(b.get("outcome")).isEqualTo("Completed");
        assertThat(b.get("exitCode")).isEqualTo(0);

        @SuppressWarnings("unchecked")
        List<Map<String, Object>> timeline = (List<Map<String, Object>>) report.get("timeline");
        assertThat(timeline).anySatisfy(e -> assertThat(e)
                .containsEntry("worker", "B").containsEntry("event", "checked").containsEntry("refund", "r_815").containsEntry("detail", "absent"));
        assertThat(timeline).anySatisfy(e -> assertThat(e)
                .containsEntry("worker", "A").containsEntry("event", "violation").containsEntry("refund", "r_815"));
    }

    @Test
    void negativeControl_withoutFencingTheStaleWorkersWriteIsAccepted() {
        Map<String, Object> report = run(Mechanism.FENCE_IDEMPOTENT.withoutFence());

        long stale = (Long) report.get("staleWritesAccepted");
        long duplicates = (Long) report.get("duplicates");
        assertThat(stale + duplicates).as("the damage the fence prevents must show without it").isPositive();
        Map<?, ?> a = (Map<?, ?>) report.get("workerA");
        assertThat(a.get("outcome")).isNotEqualTo("FenceViolation");
        assertThat(report.get("fencing")).isEqualTo(false);
    }
}
