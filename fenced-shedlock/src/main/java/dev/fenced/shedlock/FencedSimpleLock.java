package dev.fenced.shedlock;

import dev.fenced.Lease;
import dev.fenced.LeaseArguments;
import java.time.Duration;
import java.util.Optional;
import java.util.function.LongSupplier;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock lock that is a fenced {@link Lease}: {@link #token()} is what the locked task's
 * protected writes carry. Unlocked or extended, it is spent ({@link IllegalStateException} on a
 * second use), as every ShedLock lock is; the lock {@code extend} returns holds the same lease and
 * token. Not for use by two threads at once.
 */
public final class FencedSimpleLock extends AbstractSimpleLock {
    private final Lease lease;
    private final LongSupplier nanoTime;
    private final long lockedAtNanos;
    private final Binding binding;

    FencedSimpleLock(Lease lease, LockConfiguration configuration, LongSupplier nanoTime, Binding binding) {
        super(configuration);
        this.lease = lease;
        this.nanoTime = nanoTime;
        this.lockedAtNanos = nanoTime.getAsLong();
        this.binding = binding;
    }

    /** The lease under this lock. */
    public Lease lease() {
        return lease;
    }

    /** The fencing token: strictly greater than every token issued before for this lock's resource. */
    public long token() {
        return lease.token();
    }

    Binding binding() {
        return binding;
    }

    /**
     * Releases the lease, or, before {@code lockAtLeastFor} is out, keeps it until then with one
     * renewal to what is left (ShedLock's meaning of "at least"). A lease already gone is left gone.
     */
    @Override
    protected void doUnlock() {
        binding.finish();
        FencedShedLock.unbind(binding);
        Duration left = lockConfiguration.getLockAtLeastFor().minusNanos(nanoTime.getAsLong() - lockedAtNanos);
        if (left.toMillis() >= 1) {
            lease.renew(left);
        } else {
            lease.release();
        }
    }

    /** Renews the same lease to the new {@code lockAtMostFor}; empty when it is already gone. */
    @Override
    protected Optional<SimpleLock> doExtend(LockConfiguration extended) {
        Duration ttl = LeaseArguments.requireValidTtl(extended.getLockAtMostFor());
        if (!lease.renew(ttl)) {
            binding.finish();
            FencedShedLock.unbind(binding);
            return Optional.empty();
        }
        return Optional.of(new FencedSimpleLock(lease, extended, nanoTime, binding));
    }

    @Override
    public String toString() {
        return "FencedSimpleLock{" + lease.resource() + ", token=" + lease.token() + "}";
    }

    /**
     * One lock and its extensions, as the task's thread sees it: live until unlocked or found gone.
     * Finished by whichever thread unlocks (ShedLock's keep-alive extends from another thread).
     */
    static final class Binding {
        final Lease lease;
        private volatile boolean finished;

        Binding(Lease lease) {
            this.lease = lease;
        }

        void finish() {
            finished = true;
        }

        boolean finished() {
            return finished;
        }
    }
}
