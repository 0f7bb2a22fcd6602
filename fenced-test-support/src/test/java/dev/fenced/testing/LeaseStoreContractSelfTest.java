package dev.fenced.testing;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.InMemoryLeaseStore;
import dev.fenced.Lease;
import dev.fenced.LeaseStore;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The contract suite's own negative control: stores broken on purpose must fail it, or its checks
 * prove nothing about the stores that pass.
 */
class LeaseStoreContractSelfTest {

    /** Grants every request, as a lock that forgot to check its holder: tokens still rise. */
    private static final class GrantsEveryone implements LeaseStore {
        private final InMemoryLeaseStore inner = new InMemoryLeaseStore();

        @Override
        public Optional<Lease> tryAcquire(String resource, Duration ttl) {
            inner.expire(resource);
            return inner.tryAcquire(resource, ttl);
        }
    }

    /** Mutual exclusion right, but every lease carries the same token. */
    private static final class RepeatsItsToken implements LeaseStore {
        private final InMemoryLeaseStore inner = new InMemoryLeaseStore();

        @Override
        public Optional<Lease> tryAcquire(String resource, Duration ttl) {
            return inner.tryAcquire(resource, ttl).map(lease -> new Lease() {
                @Override
                public String resource() {
                    return lease.resource();
                }

                @Override
                public long token() {
                    return 1;
                }

                @Override
                public String ownerId() {
                    return lease.ownerId();
                }

                @Override
                public boolean renew(Duration ttl) {
                    return lease.renew(ttl);
                }

                @Override
                public boolean isHeld() {
                    return lease.isHeld();
                }

                @Override
                public boolean release() {
                    return lease.release();
                }
            });
        }
    }

    /** Answers every renewal with yes and changes nothing: a lease lives only its first TTL. */
    private static final class RenewsNothing implements LeaseStore {
        final InMemoryLeaseStore inner = new InMemoryLeaseStore();

        @Override
        public Optional<Lease> tryAcquire(String resource, Duration ttl) {
            return inner.tryAcquire(resource, ttl).map(lease -> new Lease() {
                @Override
                public String resource() {
                    return lease.resource();
                }

                @Override
                public long token() {
                    return lease.token();
                }

                @Override
                public String ownerId() {
                    return lease.ownerId();
                }

                @Override
                public boolean renew(Duration ttl) {
                    return lease.isHeld();
                }

                @Override
                public boolean isHeld() {
                    return lease.isHeld();
                }

                @Override
                public boolean release() {
                    return lease.release();
                }
            });
        }
    }

    private static LeaseStoreContract contractOn(LeaseStore store) {
        return new LeaseStoreContract() {
            @Override
            protected LeaseStore store() {
                return store;
            }

            @Override
            protected void expireLeaseBehindItsBack(String resource) {
                throw new UnsupportedOperationException();
            }

            @Override
            protected Duration timeLeft(String resource) {
                throw new UnsupportedOperationException();
            }
        };
    }

    @Test
    void aStoreThatGrantsEveryoneFailsTheExclusionChecks() {
        LeaseStoreContract contract = contractOn(new GrantsEveryone());
        assertThatThrownBy(contract::grantsALeaseWithATokenAndRefusesASecondHolder).isInstanceOf(AssertionError.class);
        assertThatThrownBy(contract::eightThreadsNeverHoldTheSameLiveLeaseAtOnce).isInstanceOf(AssertionError.class)
                .hasMessageContaining("holders inside at once");
    }

    /** The renewal checks read the time left instead of sleeping past a TTL: they must still catch a renewal that extends nothing. */
    @Test
    void aStoreWhoseRenewalExtendsNothingFailsTheRenewalChecks() {
        RenewsNothing store = new RenewsNothing();
        LeaseStoreContract contract = new LeaseStoreContract() {
            @Override
            protected LeaseStore store() {
                return store;
            }

            @Override
            protected void expireLeaseBehindItsBack(String resource) {
                store.inner.expire(resource);
            }

            @Override
            protected Duration timeLeft(String resource) {
                return store.inner.timeLeft(resource);
            }
        };
        assertThatThrownBy(contract::renewExtendsOnlyTheOwnersLease).isInstanceOf(AssertionError.class).hasMessageContaining("renewed to 20 s");
        assertThatThrownBy(contract::theWatchdogKeepsALiveLeaseAndReportsALostOne).isInstanceOf(AssertionError.class)
                .hasMessageContaining("renewed to the watchdog's TTL");
        assertThatThrownBy(contract::watchdogsOnOneSchedulerKeepEveryLeaseAlive).isInstanceOf(AssertionError.class)
                .hasMessageContaining("renewed leases");
    }

    @Test
    void aStoreThatRepeatsItsTokenFailsTheTokenChecks() {
        LeaseStoreContract contract = contractOn(new RepeatsItsToken());
        assertThatThrownBy(contract::tokensStrictlyIncreaseOverTenThousandAcquisitions).isInstanceOf(AssertionError.class);
        assertThatThrownBy(contract::eightThreadsNeverHoldTheSameLiveLeaseAtOnce).isInstanceOf(AssertionError.class)
                .hasMessageContaining("one token per grant");
    }
}
