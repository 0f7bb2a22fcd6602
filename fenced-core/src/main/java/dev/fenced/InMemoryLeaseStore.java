package dev.fenced;

import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * A {@link LeaseStore} in this JVM's memory, for an application's own unit tests and for
 * single-process tools: it passes the same contract as the Redis store, with leases that expire by
 * the given clock and tokens that strictly increase per resource.
 *
 * <p>Guarantees hold only inside one JVM, and only while it runs: two processes each have their own
 * store, and a restart starts every counter again at 1. Not for coordinating processes. Thread-safe.
 */
public final class InMemoryLeaseStore implements LeaseStore {
    private final Clock clock;
    private final Map<String, Holder> holders = new HashMap<>();
    private final Map<String, Long> counters = new HashMap<>();

    private record Holder(String ownerId, long token, long expiresAtMillis) {
    }

    /** A store whose leases expire by the system clock. */
    public InMemoryLeaseStore() {
        this(Clock.systemUTC());
    }

    /** A store whose leases expire by {@code clock}: a test can move time instead of waiting. */
    public InMemoryLeaseStore(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public synchronized Optional<Lease> tryAcquire(String resource, Duration ttl) {
        LeaseArguments.requireValidResource(resource);
        LeaseArguments.requireValidTtl(ttl);
        if (live(resource) != null) {
            return Optional.empty();
        }
        long token = counters.merge(resource, 1L, Long::sum);
        String ownerId = UUID.randomUUID().toString();
        holders.put(resource, new Holder(ownerId, token, clock.millis() + ttl.toMillis()));
        return Optional.of(new InMemoryLease(resource, token, ownerId));
    }

    @Override
    public synchronized void observeStoredFence(String resource, long storedFence) {
        counters.merge(resource, storedFence, Math::max);
    }

    /** Ends the live lease on {@code resource} behind its holder's back, as an expiry would: for tests of what follows. */
    public synchronized void expire(String resource) {
        holders.remove(resource);
    }

    /** The time the live lease on {@code resource} has left by the store's clock, zero when none is live: for tests. */
    public synchronized Duration timeLeft(String resource) {
        Holder holder = live(resource);
        return holder == null ? Duration.ZERO : Duration.ofMillis(holder.expiresAtMillis() - clock.millis());
    }

    @Override
    public synchronized LeaseView view(String resource) {
        LeaseArguments.requireValidResource(resource);
        long now = clock.millis(); // once: a clock read twice could put the second past the expiry
        Holder holder = holders.get(resource);
        boolean live = holder != null && holder.expiresAtMillis() > now;
        return new LeaseView(resource, live ? holder.ownerId() : null,
                live ? Duration.ofMillis(holder.expiresAtMillis() - now) : Duration.ZERO, counters.getOrDefault(resource, 0L));
    }

    private Holder live(String resource) {
        Holder holder = holders.get(resource);
        if (holder != null && holder.expiresAtMillis() <= clock.millis()) {
            holders.remove(resource);
            return null;
        }
        return holder;
    }

    private synchronized boolean owns(String resource, String ownerId) {
        Holder holder = live(resource);
        return holder != null && holder.ownerId().equals(ownerId);
    }

    private final class InMemoryLease implements Lease {
        private final String resource;
        private final long token;
        private final String ownerId;

        InMemoryLease(String resource, long token, String ownerId) {
            this.resource = resource;
            this.token = token;
            this.ownerId = ownerId;
        }

        @Override
        public String resource() {
            return resource;
        }

        @Override
        public long token() {
            return token;
        }

        @Override
        public String ownerId() {
            return ownerId;
        }

        @Override
        public boolean renew(Duration ttl) {
            LeaseArguments.requireValidTtl(ttl);
            synchronized (InMemoryLeaseStore.this) {
                if (!owns(resource, ownerId)) {
                    return false;
                }
                holders.put(resource, new Holder(ownerId, token, clock.millis() + ttl.toMillis()));
                return true;
            }
        }

        @Override
        public boolean isHeld() {
            return owns(resource, ownerId);
        }

        @Override
        public boolean release() {
            synchronized (InMemoryLeaseStore.this) {
                if (!owns(resource, ownerId)) {
                    return false;
                }
                holders.remove(resource);
                return true;
            }
        }

        @Override
        public String toString() {
            return "InMemoryLease[" + resource + " token=" + token + "]";
        }
    }
}
