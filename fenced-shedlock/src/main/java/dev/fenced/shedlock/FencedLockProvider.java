package dev.fenced.shedlock;

import dev.fenced.Lease;
import dev.fenced.LeaseArguments;
import dev.fenced.LeaseStore;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link net.javacrumbs.shedlock.core.LockProvider} on a fenced {@link LeaseStore}:
 * {@code @SchedulerLock} tasks and {@code LockingTaskExecutor}s keep working as they do, and each
 * lock carries the lease's fencing token ({@link FencedShedLock#token()} inside the task,
 * {@link FencedSimpleLock#token()} on the lock) for writes the database refuses once a newer holder
 * took over.
 *
 * <p>Behaves as ShedLock's own providers do (its provider contract runs against it): the lock lives
 * {@code lockAtMostFor}, then any node can take it; {@code unlock} before {@code lockAtLeastFor}
 * leaves it held until then; {@code extend} keeps the token and invalidates the old lock object.
 * The lock name becomes the resource {@code <prefix><name>}, checked as every resource is
 * (printable ASCII, no whitespace or braces, at most 200 characters); {@code lockAtMostFor} must be
 * at most one day.
 *
 * <p>What it does not promise, as no ShedLock provider does: that a task still holds its lock while
 * it runs. A node paused past {@code lockAtMostFor} wakes up and carries on; only its writes fenced
 * with the token are refused. Thread-safe.
 */
public final class FencedLockProvider implements ExtensibleLockProvider {
    /** What lock names are prefixed with unless the builder says otherwise. */
    public static final String DEFAULT_PREFIX = "shedlock:";

    private final LeaseStore store;
    private final String prefix;
    private final LongSupplier nanoTime;

    private FencedLockProvider(Builder builder) {
        this.store = builder.store;
        this.prefix = builder.prefix;
        this.nanoTime = builder.nanoTime;
    }

    /** Locks on {@code store}, names prefixed with {@value #DEFAULT_PREFIX}. */
    public static FencedLockProvider of(LeaseStore store) {
        return builder(store).build();
    }

    public static Builder builder(LeaseStore store) {
        return new Builder(store);
    }

    /**
     * Takes the lease {@code <prefix><name>} for {@code lockAtMostFor}, once.
     *
     * @return the lock, or empty when another node holds it (contention is normal)
     * @throws IllegalArgumentException for a name that is not a valid resource, or a
     *     {@code lockAtMostFor} over one day
     * @throws dev.fenced.StoreUnavailableException when the store cannot be reached
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        String resource = resourceOf(configuration.getName());
        Duration ttl = LeaseArguments.requireValidTtl(configuration.getLockAtMostFor());
        return store.tryAcquire(resource, ttl).map(lease -> {
            FencedSimpleLock lock = new FencedSimpleLock(lease, configuration, nanoTime, new FencedSimpleLock.Binding(lease));
            FencedShedLock.bind(lock.binding());
            return lock;
        });
    }

    /** The resource a lock name stands for. */
    public String resourceOf(String lockName) {
        Objects.requireNonNull(lockName, "lock name");
        try {
            return LeaseArguments.requireValidResource(prefix + lockName);
        } catch (IllegalArgumentException invalid) {
            throw new IllegalArgumentException("ShedLock name '" + lockName + "' cannot be a fenced resource: "
                    + invalid.getMessage(), invalid);
        }
    }

    public String prefix() {
        return prefix;
    }

    @Override
    public String toString() {
        return "FencedLockProvider{" + store + ", prefix=" + prefix + "}";
    }

    /** Builds a {@link FencedLockProvider}; not thread-safe, the provider it builds is. */
    public static final class Builder {
        private final LeaseStore store;
        private String prefix = DEFAULT_PREFIX;
        private LongSupplier nanoTime = System::nanoTime;

        private Builder(LeaseStore store) {
            this.store = Objects.requireNonNull(store, "store");
        }

        /** Put before every lock name to make its resource; empty for none. */
        public Builder prefix(String prefix) {
            this.prefix = Objects.requireNonNull(prefix, "prefix");
            if (!prefix.isEmpty()) {
                LeaseArguments.requireValidResource(prefix);
            }
            return this;
        }

        /** The monotonic clock that measures {@code lockAtLeastFor}; tests move their own. */
        public Builder nanoTime(LongSupplier nanoTime) {
            this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
            return this;
        }

        public FencedLockProvider build() {
            return new FencedLockProvider(this);
        }
    }
}
