package dev.fenced.spring.boot;

import dev.fenced.LeaseStore;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * {@code /actuator/health/fenced}: whether the lease store answers. After {@link FencedAutoConfiguration},
 * so that it sees the store that one made; off with {@code management.health.fenced.enabled=false}.
 */
@AutoConfiguration(after = FencedAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnProperty(name = "fenced.enabled", havingValue = "true", matchIfMissing = true)
@ConditionalOnBean(LeaseStore.class)
@ConditionalOnEnabledHealthIndicator("fenced")
public class FencedHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "fencedHealthIndicator")
    public FencedHealthIndicator fencedHealthIndicator(LeaseStore store) {
        return new FencedHealthIndicator(store);
    }
}
