package dev.fenced;

/**
 * The highest fence already stored for a resource, e.g. {@code SELECT MAX(fence) FROM refund
 * WHERE merchant = ?}. A lease store asks for it only when its counter is missing, and raises the
 * counter above it before issuing a token, so the counter never goes backwards.
 *
 * <p>Only as good as its query: fences stored in a table the floor does not read are not
 * protected from a counter reset, and tokens issued but never written are not seen at all (the
 * Redis store reseeds with a margin above the floor for them).
 */
@FunctionalInterface
public interface FenceFloor {

    /** The highest fence stored for {@code resource}, or 0 when none is. */
    long highestStoredFence(String resource);
}
