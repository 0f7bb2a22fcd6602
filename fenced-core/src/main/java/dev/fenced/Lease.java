package dev.fenced;

import java.time.Duration;

/**
 * A time-limited claim on a resource, with the fencing token issued when it was granted.
 *
 * <p>The lease is liveness only: it keeps other workers away while it is live and lets them in
 * when its holder dies. It does <em>not</em> tell its holder whether it is still live: a process
 * that was paused past its TTL will find out only when a fenced write with {@link #token()} is
 * refused. Carry the token into every protected write.
 *
 * <p>Implementations are thread-safe.
 */
public interface Lease extends AutoCloseable {

    /** The resource this lease is for, e.g. {@code settle:m_4471}. */
    String resource();

    /** The fencing token: strictly greater than every token issued before for this resource. */
    long token();

    /** A random id for this acquisition; only this id can release or renew the lease. */
    String ownerId();

    /**
     * Extends this lease to {@code ttl} from now, only if it is still this owner's.
     *
     * @return false when the lease is gone (expired, or taken by another holder); nothing changed
     */
    boolean renew(Duration ttl);

    /**
     * Asks the store whether this owner still holds the lease. A hint, never a guarantee: the
     * lease can expire between the answer and the next write, and a pause lands exactly there.
     * Checking before each write narrows the window; only a fenced write closes it.
     */
    boolean isHeld();

    /**
     * Releases the lease, only if it is still this owner's (compare-and-delete).
     *
     * @return false when the lease was already gone; a stale release never deletes another
     *     holder's lease
     */
    boolean release();

    /** Same as {@link #release()}, for try-with-resources. */
    @Override
    default void close() {
        release();
    }
}
