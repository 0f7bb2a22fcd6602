package dev.fenced;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.testing.ManualScheduler;
import dev.fenced.testing.SettableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The watchdog's own decisions, with time and renewals driven by the test: a {@link ManualScheduler}
 * that runs a renewal when the test moves its {@link SettableClock}, and a lease of the in-memory
 * store (on the same clock) whose renewal fails while the test says so, as a Redis that times out
 * during a failover does.
 *
 * <p>In the test kit's module, not fenced-core's: it needs the kit's ManualScheduler, and the kit
 * depends on fenced-core.
 */
class LeaseWatchdogTest {
    private static final Duration TTL = Duration.ofSeconds(30);

    private final ManualScheduler scheduler = new ManualScheduler();
    private final SettableClock clock = scheduler.clock();
    private final InMemoryLeaseStore store = new InMemoryLeaseStore(clock);
    private final List<Throwable> told = new ArrayList<>();

    @AfterEach
    void stopScheduler() {
        scheduler.shutdownNow();
    }

    @Test
    void aFailedRenewalIsRetriedUntilTheTtlRunsOut_negativeControlOneFailureNoLongerEndsIt() {
        FlakyLease lease = new FlakyLease(store.tryAcquire("job:blip", TTL).orElseThrow());
        try (LeaseWatchdog watchdog = LeaseWatchdog.start(lease, TTL, 1.0 / 3, (l, cause) -> told.add(cause), scheduler, clock)) {
            assertThat(scheduler.advance(Duration.ofMillis(9_999))).as("no renewal before a third of the TTL").isZero();

            lease.failing = true;
            renewAt(10);
            assertThat(watchdog.isLeaseLost()).as("one timeout with 20 s of the TTL left").isFalse();
            lease.failing = false;
            renewAt(20);
            assertThat(lease.renewals).isEqualTo(2);
            assertThat(lease.isHeld()).as("the retry renewed it").isTrue();

            lease.failing = true;
            renewAt(30);
            renewAt(40);
            assertThat(watchdog.isLeaseLost()).as("renewed at 20 s: live until 50 s").isFalse();
            assertThat(told).isEmpty();
            renewAt(50);
            assertThat(watchdog.isLeaseLost()).as("the TTL since the last renewal has run out").isTrue();
            assertThat(told).singleElement().isInstanceOf(StoreUnavailableException.class);
            assertThat(scheduler.pendingTasks()).as("stopped: no renewal left scheduled").isZero();
            renewAt(60);
            assertThat(lease.renewals).as("no renewal after the loss").isEqualTo(5);
            assertThat(told).as("told once").hasSize(1);
        }
    }

    @Test
    void aRenewalThatFindsTheLeaseGoneIsALossAtOnce() {
        FlakyLease lease = new FlakyLease(store.tryAcquire("job:gone", TTL).orElseThrow());
        try (LeaseWatchdog watchdog = LeaseWatchdog.start(lease, TTL, 1.0 / 3, (l, cause) -> told.add(cause), scheduler, clock)) {
            lease.failing = true;
            renewAt(10);
            lease.failing = false;
            store.expire("job:gone");
            renewAt(20);
            assertThat(watchdog.isLeaseLost()).as("gone, with 10 s of the TTL left").isTrue();
            assertThat(told).containsExactly((Throwable) null);
        }
    }

    @Test
    void aWatchdogClosedWhileRenewalsFailTellsNobody() {
        FlakyLease lease = new FlakyLease(store.tryAcquire("job:closed", TTL).orElseThrow());
        LeaseWatchdog watchdog = LeaseWatchdog.start(lease, TTL, 1.0 / 3, (l, cause) -> told.add(cause), scheduler, clock);
        lease.failing = true;
        renewAt(10);
        watchdog.close();
        renewAt(40);
        assertThat(lease.renewals).as("no renewal after close").isEqualTo(1);
        assertThat(told).isEmpty();
        assertThat(watchdog.isLeaseLost()).isFalse();
    }

    /** The renewal at 30 s, the last the TTL allows, is running when close() is called: its failure says nothing. */
    @Test
    void aRenewalRunningWhenTheWatchdogIsClosedTellsNobody() {
        FlakyLease lease = new FlakyLease(store.tryAcquire("job:closing", TTL).orElseThrow());
        LeaseWatchdog watchdog = LeaseWatchdog.start(lease, TTL, 1.0 / 3, (l, cause) -> told.add(cause), scheduler, clock);
        lease.failing = true;
        renewAt(20);
        lease.duringRenewal = watchdog::close;
        renewAt(30);
        assertThat(lease.renewals).isEqualTo(3);
        assertThat(told).as("a watchdog that told here would report a lease its owner stopped caring for").isEmpty();
        assertThat(watchdog.isLeaseLost()).isFalse();
    }

    /**
     * Forty watchdogs on the process's shared threads renew forty leases without a thread each. The
     * test waits (bounded) for each lease's second renewal on those threads: the renewals are the
     * behaviour, and only the shared threads run them.
     */
    @Test
    void watchdogsOnTheSharedThreadsNeedNoThreadEach() throws InterruptedException {
        InMemoryLeaseStore realTime = new InMemoryLeaseStore();
        Duration ttl = Duration.ofSeconds(3);
        List<LeaseWatchdog> watchdogs = new ArrayList<>();
        List<CountingLease> leases = new ArrayList<>();
        AtomicInteger lost = new AtomicInteger();
        try {
            for (int i = 0; i < 40; i++) {
                CountingLease lease = new CountingLease(realTime.tryAcquire("job:shared-" + i, ttl).orElseThrow(), 2);
                leases.add(lease);
                watchdogs.add(LeaseWatchdog.start(lease, ttl, 0.1, (l, cause) -> lost.incrementAndGet()));
            }
            for (CountingLease lease : leases) {
                assertThat(lease.renewedTwice.await(10, TimeUnit.SECONDS)).as("%s renewed twice", lease.resource()).isTrue();
            }
            long watchdogThreads = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().startsWith("fenced-watchdog-")).count();
            assertThat(watchdogThreads).as("shared watchdog threads").isLessThanOrEqualTo(Math.max(2, Runtime.getRuntime().availableProcessors()));
            assertThat(lost).as("leases reported lost").hasValue(0);
            assertThat(leases).as("renewed leases still held").allMatch(Lease::isHeld);
        } finally {
            watchdogs.forEach(LeaseWatchdog::close);
            leases.forEach(Lease::release);
        }
    }

    private void renewAt(long seconds) {
        scheduler.advance(Duration.between(clock.instant(), SettableClock.DEFAULT_START.plusSeconds(seconds)));
    }

    /** A lease that answers as {@code lease} does, but for what a subclass changes (its renewal). */
    private abstract static class ForwardingLease implements Lease {
        final Lease lease;

        ForwardingLease(Lease lease) {
            this.lease = lease;
        }

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
        public boolean isHeld() {
            return lease.isHeld();
        }

        @Override
        public boolean release() {
            return lease.release();
        }
    }

    /** A lease of the in-memory store whose renewal times out while {@code failing}, as a store in a failover does. */
    private static final class FlakyLease extends ForwardingLease {
        volatile boolean failing;
        Runnable duringRenewal = () -> { };
        int renewals;

        FlakyLease(Lease lease) {
            super(lease);
        }

        @Override
        public boolean renew(Duration ttl) {
            renewals++;
            duringRenewal.run();
            if (failing) {
                throw new StoreUnavailableException("Redis at redis://127.0.0.1:6379 did not answer: Command timed out", null);
            }
            return lease.renew(ttl);
        }
    }

    /** A lease that counts its renewals down on a latch, for a test that waits for renewals on real threads. */
    private static final class CountingLease extends ForwardingLease {
        final CountDownLatch renewedTwice;

        CountingLease(Lease lease, int renewals) {
            super(lease);
            this.renewedTwice = new CountDownLatch(renewals);
        }

        @Override
        public boolean renew(Duration ttl) {
            boolean renewed = lease.renew(ttl);
            if (renewed) {
                renewedTwice.countDown();
            }
            return renewed;
        }
    }
}
