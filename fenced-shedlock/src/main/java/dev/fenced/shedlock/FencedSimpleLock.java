package dev.fenced.shedlock;

import dev.fenced.Lease;
import dev.fenced.LeaseArguments;
import java.time.Duration;
import java.util.Optional;
import java.util.function.LongSupplier;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock lock that is a fenced {@link Lease}: {@link #token()} is what the locked task's
 * protected writes carry. Unlocked or extended, it is spent ({@link IllegalStateException} on a
 * second use), as every ShedLock lock is; the lock {@code extend} returns holds the same lease and
 * token. An extension that finds the lease gone leaves the task with this lease still (its writes
 * are refused once a newer holder entered), never with an enclosing lock's. Not for use by two
 * threads at once.
 */
public final class FencedSimpleLock implements SimpleLock {
    private final Lease lease;
    private final LockConfiguration configuration;
    private final LongSupplier nanoTime;
    private final long lockedAtNanos;
    private final Binding binding;
    private boolean valid = true;

    FencedSimpleLock(Lease lease, LockConfiguration configuration, LongSupplier nanoTime, Binding binding) {
        this.lease = lease;
        this.configuration = configuration;
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
     *
     * @throws IllegalStateException when this lock was unlocked or extended already; a lock whose
     *     extension failed is still let go from its thread first
     */
    @Override
    public void unlock() {
        if (!valid) {
            // ShedLock's executor unlocks the lock it holds even when its extension failed: the task is over.
            FencedShedLock.unbind(binding);
            throw spent();
        }
        valid = false;
        binding.finish();
        FencedShedLock.unbind(binding);
        Duration left = configuration.getLockAtLeastFor().minusNanos(nanoTime.getAsLong() - lockedAtNanos);
        if (left.toMillis() >= 1) {
            lease.renew(left);
        } else {
            lease.release();
        }
    }

    /**
     * Renews the same lease to {@code lockAtMostFor}; empty when it is already gone. Either way this
     * lock is spent.
     *
     * @throws IllegalStateException when this lock was unlocked or extended already
     */
    @Override
    public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        if (!valid) {
            throw spent();
        }
        LeaseArguments.requireValidTtl(lockAtMostFor);
        LockConfiguration extended = new LockConfiguration(ClockProvider.now(), configuration.getName(), lockAtMostFor, lockAtLeastFor);
        valid = false;
        if (!lease.renew(lockAtMostFor)) {
            return Optional.empty();
        }
        return Optional.of(new FencedSimpleLock(lease, extended, nanoTime, binding));
    }

    private IllegalStateException spent() {
        return new IllegalStateException("Lock " + configuration.getName() + " is not valid, it has already been unlocked or extended");
    }

    @Override
    public String toString() {
        return "FencedSimpleLock{" + lease.resource() + ", token=" + lease.token() + "}";
    }

    /**
     * One lock and its extensions, as the task's thread sees it: live until unlocked. Finished by
     * whichever thread unlocks (ShedLock's keep-alive extends from another thread).
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
