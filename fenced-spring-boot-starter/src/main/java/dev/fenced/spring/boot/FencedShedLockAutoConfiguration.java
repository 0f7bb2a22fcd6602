package dev.fenced.spring.boot;

import dev.fenced.LeaseStore;
import dev.fenced.shedlock.FencedLockProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * A ShedLock {@code LockProvider} on the lease store, when fenced-shedlock is on the class path and
 * the application defines no provider of its own: {@code @SchedulerLock} tasks keep their
 * annotations and read their token with {@code FencedShedLock.token()}. Lock names become resources
 * under {@code fenced.shedlock.prefix}. After {@link FencedAutoConfiguration}, whose store it uses.
 */
@AutoConfiguration(after = FencedAutoConfiguration.class)
@ConditionalOnClass(name = {"net.javacrumbs.shedlock.core.LockProvider", "dev.fenced.shedlock.FencedLockProvider"})
@ConditionalOnProperty(name = "fenced.enabled", havingValue = "true", matchIfMissing = true)
@ConditionalOnBean(LeaseStore.class)
public class FencedShedLockAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(type = "net.javacrumbs.shedlock.core.LockProvider")
    public FencedLockProvider fencedLockProvider(LeaseStore store, FencedProperties properties) {
        return FencedLockProvider.builder(store).prefix(properties.getShedlock().getPrefix()).build();
    }
}
