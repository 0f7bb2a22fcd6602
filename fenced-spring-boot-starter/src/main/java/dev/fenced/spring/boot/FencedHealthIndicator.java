package dev.fenced.spring.boot;

import dev.fenced.LeaseStore;
import dev.fenced.redis.RedisLeaseStore;
import java.time.Duration;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * Up when the lease store answers a PING, with the round trip; down with the store's error (which
 * names the server without its password). Says nothing about whether any lease is held, nor about
 * the database, which Spring's own indicator reports.
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
        if (store instanceof RedisLeaseStore redis) {
            Duration roundTrip = redis.ping();
            builder.up().withDetail("pingMillis", roundTrip.toNanos() / 1_000_000.0);
        } else {
            builder.unknown();
        }
    }
}
