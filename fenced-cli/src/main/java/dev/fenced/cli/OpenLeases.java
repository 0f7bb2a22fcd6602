package dev.fenced.cli;

import dev.fenced.LeaseStore;
import dev.fenced.LeaseView;
import dev.fenced.redis.LeaseSnapshot;
import dev.fenced.redis.RedisLeaseStore;
import java.util.Optional;

/**
 * The lease store a command opened, whichever {@code --leases} chose, and what closing it closes:
 * the store's own connections, never the database pool it was given.
 */
public final class OpenLeases implements AutoCloseable {
    /** The store as built, for what only it can show (Redis's counter and issuer). */
    private final LeaseStore opened;
    /** The store every lease is taken through: {@link #opened}, or it behind the deployment's check. */
    private final LeaseStore store;
    private final AutoCloseable closer;

    OpenLeases(LeaseStore opened, AutoCloseable closer) {
        this(opened, opened, closer);
    }

    private OpenLeases(LeaseStore opened, LeaseStore store, AutoCloseable closer) {
        this.opened = opened;
        this.store = store;
        this.closer = closer;
    }

    /** The store to take leases from. */
    public LeaseStore store() {
        return store;
    }

    /** The same store with every lease taken through {@code wrapper}'s; closing closes the same. */
    OpenLeases checkedBy(java.util.function.UnaryOperator<LeaseStore> wrapper) {
        return new OpenLeases(opened, wrapper.apply(opened), closer);
    }

    /** The Redis store, when the leases are in Redis: its counter and issuer records are Redis's own. */
    public Optional<RedisLeaseStore> redis() {
        return opened instanceof RedisLeaseStore redis ? Optional.of(redis) : Optional.empty();
    }

    /**
     * What the store holds for {@code resource}, in Redis's shape: Redis's own snapshot, or another
     * store's view with its highest token as the counter and no issuer recorded (it issues its own).
     */
    public LeaseSnapshot snapshot(String resource) {
        if (opened instanceof RedisLeaseStore redis) {
            return redis.inspect(resource);
        }
        LeaseView view = opened.view(resource);
        return new LeaseSnapshot(resource, view.holder(), view.timeLeft(),
                view.highestTokenIssued() == 0 ? null : view.highestTokenIssued());
    }

    @Override
    public void close() {
        try {
            closer.close();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("could not close the lease store: " + e.getMessage(), e);
        }
    }
}
