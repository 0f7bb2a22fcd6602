package dev.fenced.settlement;

import dev.fenced.FencedException;

/**
 * A process named another lease store than the one its deployment recorded
 * ({@link DeploymentLeaseStore}); it took no lease. The message says which store is recorded and
 * how to switch.
 */
public final class LeaseStoreMismatchException extends FencedException {
    private final String recorded;
    private final String requested;

    public LeaseStoreMismatchException(String recorded, String requested) {
        super(DeploymentLeaseStore.switchingTo(recorded)
                .map(to -> "a switch of this deployment's leases to " + to + " is under way (recorded in the database); this process,"
                        + " started with " + requested + ", took no lease. Finish the switch, then use " + to)
                .orElse("this deployment's leases are in " + recorded + " (recorded in the database), this process was started with "
                        + requested + "; leases in two stores do not keep each other's holders out, so it took no lease. Use "
                        + recorded + ", or stop every worker and switch the deployment to " + requested));
        this.recorded = recorded;
        this.requested = requested;
    }

    /** What the deployment's record holds: a store, or a switch under way ({@link DeploymentLeaseStore#switchingTo}). */
    public String recorded() {
        return recorded;
    }

    public String requested() {
        return requested;
    }
}
