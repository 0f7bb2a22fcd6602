package dev.fenced;

/**
 * Issues fencing tokens from a durable counter, e.g. a database row, so that tokens survive the
 * loss of the lease store's data. Tokens for a resource strictly increase and are never reused.
 *
 * <p>A token drawn from a separate source is taken just after the lease, in a second round trip:
 * a holder paused between the two can draw a token after its lease lapsed. That token is still
 * higher than every earlier one, so the fence still gives each row to exactly one holder; the
 * lease just stops being a reliable hint for that holder.
 */
@FunctionalInterface
public interface TokenSource {

    /** The next token for {@code resource}. */
    long nextToken(String resource);
}
