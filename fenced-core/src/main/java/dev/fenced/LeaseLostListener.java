package dev.fenced;

/** Told once when a {@link LeaseWatchdog} finds its lease gone, or cannot renew it before its TTL runs out. */
@FunctionalInterface
public interface LeaseLostListener {

    /**
     * @param lease the lease that was lost
     * @param cause the last renewal error, or null when the store answered that the lease is gone
     */
    void onLeaseLost(Lease lease, Throwable cause);
}
