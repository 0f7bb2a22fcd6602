package dev.fenced;

import java.time.Duration;
import java.util.Optional;

/**
 * Grants leases with fencing tokens.
 *
 * <p>Guarantees: while a lease is live no other lease is granted for the same resource (up to the
 * store's own clock and replication limits), and tokens for a resource strictly increase in
 * grant order and are never reused. Does not guarantee: that a holder knows when its lease
 * ended. Mutual exclusion of writes comes only from the token checked by the store written to.
 *
 * <p>Implementations are thread-safe.
 */
public interface LeaseStore {

    /**
     * Tries once to take the lease.
     *
     * @param resource a name of 1 to {@value LeaseArguments#MAX_RESOURCE_LENGTH} printable
     *     characters, without whitespace or braces
     * @param ttl how long the lease lives without renewal; positive, at most one day
     * @return the lease, or empty when another holder's lease is live (contention is normal)
     * @throws IllegalArgumentException for an invalid resource name or TTL
     * @throws CounterLostException when the counter vanished and cannot be reseeded safely
     * @throws StoreUnavailableException when the store cannot be reached
     */
    Optional<Lease> tryAcquire(String resource, Duration ttl);

    /**
     * Tells the store that a fence at least this high is already stored for the resource, as a
     * refused write reveals. A store whose counter fell behind (a failover to a lagging replica, a
     * reset) raises it, so the next holder's token is above the fence instead of being refused
     * again and again. Never lowers anything; stores with a durable counter may ignore it.
     */
    default void observeStoredFence(String resource, long storedFence) {
    }

    /**
     * A look at the resource's lease for status pages: who holds it and for how long by the
     * store's clock. A hint, never a guarantee; stores that cannot tell say so.
     *
     * @throws UnsupportedOperationException when the store keeps nothing it could show
     * @throws StoreUnavailableException when the store cannot be reached
     */
    default LeaseView view(String resource) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot show its leases");
    }
}
