package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The declared Lettuce range. The versions inside it that CI runs: this build's own (7.x, every
 * fenced-redis test) and Spring Boot's managed ones in the sample applications (6.6 on Boot 3.5, 6.8
 * on Boot 4.0).
 */
class LettuceVersionTest {

    @ParameterizedTest
    @ValueSource(strings = {"6.6.0.RELEASE/643bd47", "6.8.2.RELEASE/34f8700", "7.7.0.RELEASE/1960d49", "7.0.0"})
    void versionsInTheRangePass(String version) {
        assertThatCode(() -> LettuceVersion.requireSupported(version)).doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = {"5.3.7.RELEASE", "6.1.10.RELEASE", "6.5.5.RELEASE", "8.0.0.RELEASE"})
    void versionsOutsideItAreRefusedWithTheRange(String version) {
        assertThatThrownBy(() -> LettuceVersion.requireSupported(version))
                .isInstanceOf(UnsupportedLettuceVersionException.class)
                .hasMessage("fenced-redis runs on Lettuce 6.6 to 7.x; the class path has Lettuce " + version);
    }

    @Test
    void aJarThatStatesNoVersionIsNotJudged() {
        assertThatCode(() -> LettuceVersion.requireSupported(null)).doesNotThrowAnyException();
        assertThatCode(() -> LettuceVersion.requireSupported("unknown")).doesNotThrowAnyException();
    }

    @Test
    void thisBuildsLettuceIsReadFromItsJarAndSupported() {
        assertThat(LettuceVersion.onClassPath()).startsWith("7.");
        assertThatCode(() -> LettuceVersion.requireSupported(LettuceVersion.onClassPath())).doesNotThrowAnyException();
    }
}
