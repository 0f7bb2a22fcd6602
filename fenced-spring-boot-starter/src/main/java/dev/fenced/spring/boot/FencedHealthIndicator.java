package dev.fenced.spring.boot;

import dev.fenced.LeaseStore;
import dev.fenced.redis.RedisLeaseStore;
import java.time.Duration;
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
    /** The resource the probe looks at; nobody takes a lease on it. */
    static final String PROBE = "fenced:health-probe";
    private final LeaseStore store;

    public FencedHealthIndicator(LeaseStore store) {
        super("fenced lease store health check failed");
        this.store = store;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("store", store.toString());
        if (store instanceof RedisLeaseStore redis) {
            Duration roundTrip = redis.ping();
            builder.up().withDetail("pingMillis", roundTrip.toNanos() / 1_000_000.0);
            return;
        }
        long start = System.nanoTime();
        try {
            store.view(PROBE);
        } catch (UnsupportedOperationException cannotShow) {
            builder.unknown();
            return;
        }
        builder.up().withDetail("pingMillis", (System.nanoTime() - start) / 1_000_000.0);
    }
}
