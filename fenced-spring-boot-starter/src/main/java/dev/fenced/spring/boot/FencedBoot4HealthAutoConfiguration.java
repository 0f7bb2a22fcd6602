package dev.fenced.spring.boot;

import dev.fenced.LeaseStore;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * {@code /actuator/health/fenced} on Spring Boot 4 ({@link FencedHealthAutoConfiguration} is Boot
 * 3's): only read when Boot 4's health module is on the class path, so neither generation loads the
 * other's classes. Off with {@code management.health.fenced.enabled=false}.
 */
@AutoConfiguration(after = FencedAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
@ConditionalOnProperty(name = "fenced.enabled", havingValue = "true", matchIfMissing = true)
@ConditionalOnBean(LeaseStore.class)
@ConditionalOnEnabledHealthIndicator("fenced")
public class FencedBoot4HealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "fencedHealthIndicator")
    public FencedBoot4HealthIndicator fencedHealthIndicator(LeaseStore store) {
        return new FencedBoot4HealthIndicator(store);
    }
}
