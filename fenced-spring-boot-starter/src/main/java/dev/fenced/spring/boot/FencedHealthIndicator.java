package dev.fenced.spring.boot;

import dev.fenced.LeaseStore;
import java.util.OptionalDouble;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * Up when the lease store answers: a PING for Redis, a look at one resource's lease
 * ({@link LeaseStore#view}) for the others, with the round trip; down with the store's error
 * (which names the server without its password); unknown for a store that can show no lease. Says
 * nothing about whether any lease is held, nor about the database, which Spring's own indicator
 * reports.
 */
public class FencedHealthIndicator extends AbstractHealthIndicator {
    private final LeaseStore store;

    public FencedHealthIndicator(LeaseStore store) {
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
