package dev.fenced;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LeaseArgumentsTest {
    @Test
    void acceptsTheArticlesResourceName() {
        assertThat(LeaseArguments.requireValidResource("settle:m_4471")).isEqualTo("settle:m_4471");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "settle m_4471", "settle:{m_4471}", "tab\there", "caf\u00e9"})
    void rejectsMalformedResourceNames(String name) {
        assertThatThrownBy(() -> LeaseArguments.requireValidResource(name))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("resource name");
    }

    @Test
    void rejectsNullAndOverlongResourceNames() {
        assertThatThrownBy(() -> LeaseArguments.requireValidResource(null)).hasMessageContaining("null");
        assertThatThrownBy(() -> LeaseArguments.requireValidResource("x".repeat(201))).hasMessageContaining("limit is 200");
    }

    @Test
    void rejectsTtlsOutsideOneMillisecondToOneDay() {
        assertThatThrownBy(() -> LeaseArguments.requireValidTtl(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LeaseArguments.requireValidTtl(Duration.ofMillis(-5))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LeaseArguments.requireValidTtl(Duration.ofNanos(10))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LeaseArguments.requireValidTtl(Duration.ofDays(1).plusMillis(1))).hasMessageContaining("one day");
        assertThatThrownBy(() -> LeaseArguments.requireValidTtl(null)).isInstanceOf(IllegalArgumentException.class);
        assertThat(LeaseArguments.requireValidTtl(Duration.ofDays(1))).isEqualTo(Duration.ofDays(1));
    }
}
