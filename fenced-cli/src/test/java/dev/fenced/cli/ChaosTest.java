package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The short form of {@code fenced chaos} that CI runs: real worker processes under pauses, kills,
 * Redis restarts and FLUSHALL, killed database connections and gateway faults; then the same seed
 * with fencing off, which must show violations or the run proved nothing.
 */
class ChaosTest {
    private static final long SEED = 4471;

    private static Map<String, Object> run(boolean fencing, EnumSet<ChaosHarness.Fault> faults) throws Exception {
        ChaosHarness.Settings settings = new ChaosHarness.Settings(6, 25, 3, Duration.ofSeconds(25), Duration.ofSeconds(1), SEED,
                faults, fencing, false, null);
        return new ChaosHarness(settings, null).run();
    }

    @Test
    void withFencingEveryRefundIsCreatedOnceAndSentUnderEveryFault() throws Exception {
        Map<String, Object> report = run(true, EnumSet.allOf(ChaosHarness.Fault.class));
        assertThat(report.get("checks")).as(ChaosHarness.table(report)).satisfies(checks ->
                assertThat(((Map<?, ?>) checks).values()).allMatch(v -> ((Number) v).longValue() == 0));
        assertThat(report.get("violations")).isEqualTo(0L);
        assertThat(report.get("drained")).isEqualTo(true);
        assertThat(report.get("gatewayRefunds")).isEqualTo(150);
        Map<?, ?> faults = (Map<?, ?>) report.get("faults");
        assertThat(((Number) faults.get("pause")).intValue() + ((Number) faults.get("kill")).intValue()).as("faults struck").isPositive();
    }

    @Test
    void negativeControl_withoutTheFencePausedWorkersWritesAreAccepted() throws Exception {
        Map<String, Object> report = run(false, EnumSet.of(ChaosHarness.Fault.PAUSE));
        assertThat((Long) report.get("violations")).as(ChaosHarness.table(report)).isPositive();
    }
}
