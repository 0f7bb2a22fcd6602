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
    private final LeaseBackend backend;
    private final LeaseStore store;
    private final AutoCloseable closer;

    OpenLeases(LeaseBackend backend, LeaseStore store, AutoCloseable closer) {
        this.backend = backend;
        this.store = store;
        this.closer = closer;
    }

    public LeaseBackend backend() {
        return backend;
    }

    public LeaseStore store() {
        return store;
    }

    /** The Redis store, when the leases are in Redis: its counter and issuer records are Redis's own. */
    public Optional<RedisLeaseStore> redis() {
        return store instanceof RedisLeaseStore redis ? Optional.of(redis) : Optional.empty();
    }

    /**
     * What the store holds for {@code resource}, in Redis's shape: Redis's own snapshot, or another
     * store's view with its highest token as the counter and no issuer recorded (it issues its own).
     */
    public LeaseSnapshot snapshot(String resource) {
        if (store instanceof RedisLeaseStore redis) {
            return redis.inspect(resource);
        }
        LeaseView view = store.view(resource);
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
