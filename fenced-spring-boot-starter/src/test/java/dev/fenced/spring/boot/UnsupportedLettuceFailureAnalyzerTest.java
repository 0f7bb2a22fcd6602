package dev.fenced.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.redis.LettuceVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A start stopped by a Lettuce outside the range ends in Boot's failure report with fenced's
 * description and the change to make, found through spring.factories as Boot finds its own.
 * The version is handed to the check, since no test class path can hold two Lettuces.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnsupportedLettuceFailureAnalyzerTest {

    @Configuration(proxyBeanMethods = false)
    static class OnLettuceFive {
        @Bean
        Object redisClientCheck() {
            LettuceVersion.requireSupported("5.3.7.RELEASE");
            return new Object();
        }
    }

    @Test
    void theReportSaysWhatWasFoundAndWhatToSet(CapturedOutput output) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(OnLettuceFive.class).web(WebApplicationType.NONE)
                .properties("fenced.enabled=false").run()).isInstanceOf(BeanCreationException.class);
        assertThat(output).contains("APPLICATION FAILED TO START")
                .contains("fenced's Redis lease store cannot run on the Lettuce this application has: 5.3.7.RELEASE"
                        + " (fenced-redis supports 6.6 to 7.x).")
                .contains("set the property lettuce.version");
    }
}
