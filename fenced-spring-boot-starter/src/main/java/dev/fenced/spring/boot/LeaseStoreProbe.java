package dev.fenced.spring.boot;

import dev.fenced.LeaseStore;
import dev.fenced.redis.RedisLeaseStore;
import java.time.Duration;
import java.util.OptionalDouble;

/**
 * What the health indicators of both Boot generations ask the lease store: a PING for Redis, a look
 * at one resource's lease ({@link LeaseStore#view}) for the others. Empty for a store that can show
 * no lease; the store's own exception when it does not answer.
 */
final class LeaseStoreProbe {
    /** The resource the probe looks at; nobody takes a lease on it. */
    static final String PROBE = "fenced:health-probe";

    private LeaseStoreProbe() {
    }

    /** The round trip in milliseconds, or empty when the store cannot be probed this way. */
    static OptionalDouble roundTripMillis(LeaseStore store) {
        if (store instanceof RedisLeaseStore redis) {
            Duration roundTrip = redis.ping();
            return OptionalDouble.of(roundTrip.toNanos() / 1_000_000.0);
        }
        long start = System.nanoTime();
        try {
            store.view(PROBE);
        } catch (UnsupportedOperationException cannotShow) {
            return OptionalDouble.empty();
        }
        return OptionalDouble.of((System.nanoTime() - start) / 1_000_000.0);
    }
}
