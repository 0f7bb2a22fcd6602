package dev.fenced;

/**
 * Draws epochs from a durable counter (e.g. a database sequence) for a lease store that issues
 * tokens itself in epochs: a token is the epoch in its high bits and the store's own counter in
 * the low ones, so every token of a new epoch is above every token of an older one. The store
 * draws an epoch for a resource when it is first acquired and whenever it may have lost the
 * resource's tokens, never on the usual acquisition.
 *
 * <p>Guarantees asked of an implementation: the epochs drawn strictly increase and are never
 * reused, whatever the lease store loses. Not asked: consecutive epochs, or epochs per resource
 * (one sequence for every resource will do). An epoch source is not a {@link TokenSource}: its
 * values are epochs, not tokens, and a store takes them only as such.
 */
@FunctionalInterface
public interface EpochSource {

    /** The next epoch for {@code resource}, above every epoch drawn before. */
    long nextEpoch(String resource);
}
