package dev.fenced.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {
    @Test
    void durationsReadAsPeopleWriteThem() {
        assertThat(Durations.human(Duration.ZERO)).isEqualTo("0s");
        assertThat(Durations.human(Duration.ofMillis(250))).isEqualTo("250ms");
        assertThat(Durations.human(Duration.ofNanos(500_000))).isEqualTo("0.5ms");
        assertThat(Durations.human(Duration.ofMillis(1500))).isEqualTo("1.5s");
        assertThat(Durations.human(Duration.ofSeconds(30))).isEqualTo("30s");
        assertThat(Durations.human(Duration.ofMinutes(2))).isEqualTo("2m");
        assertThat(Durations.human(Duration.ofSeconds(90))).isEqualTo("1m30s");
        assertThat(Durations.human(Duration.ofMinutes(90))).isEqualTo("1h30m");
        assertThat(Durations.human(Duration.ofDays(1))).isEqualTo("24h");
        assertThat(Durations.human(Duration.ofHours(1).plusMillis(250))).isEqualTo("1h0.25s");
        assertThat(Durations.human(Duration.ofSeconds(-2))).isEqualTo("-2s");
    }
}
