package dev.fenced.spring.boot;

import dev.fenced.LeaseStore;
import java.util.OptionalDouble;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * {@link FencedHealthIndicator} for Spring Boot 4, whose health contract moved to
 * {@code org.springframework.boot.health.contributor}: the same probe, the same details.
 */
public class FencedBoot4HealthIndicator extends AbstractHealthIndicator {
    private final LeaseStore store;

    public FencedBoot4HealthIndicator(LeaseStore store) {
        super("fenced lease store health check failed");
        this.store = store;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("store", store.toString());
        OptionalDouble roundTrip = LeaseStoreProbe.roundTripMillis(store);
        if (roundTrip.isPresent()) {
            builder.up().withDetail("pingMillis", roundTrip.getAsDouble());
        } else {
            builder.unknown();
        }
    }
}
