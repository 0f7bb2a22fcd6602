package dev.fenced;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The watchdog's own decisions, with time and renewals driven by the test: a settable clock, a
 * scheduler that runs the renewal only when told, and a lease of the in-memory store whose renewal
 * fails while the test says so, as a Redis that times out during a failover does.
 */
class LeaseWatchdogTest {
    private static final Duration TTL = Duration.ofSeconds(30);

    private final SettableClock clock = new SettableClock();
    private final InMemoryLeaseStore store = new InMemoryLeaseStore(clock);
    private final ManualScheduler scheduler = new ManualScheduler();
    private final List<Throwable> told = new ArrayList<>();

    @AfterEach
    void stopScheduler() {
        scheduler.shutdownNow();
    }

    @Test
    void aFailedRenewalIsRetriedUntilTheTtlRunsOut_negativeControlOneFailureNoLongerEndsIt() {
        FlakyLease lease = new FlakyLease(store.tryAcquire("job:blip", TTL).orElseThrow());
        try (LeaseWatchdog watchdog = LeaseWatchdog.start(lease, TTL, 1.0 / 3, (l, cause) -> told.add(cause), scheduler, clock)) {
            assertThat(scheduler.delayMillis).as("renewed every third of the TTL").isEqualTo(10_000);

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
            assertThat(scheduler.future.isCancelled()).as("stopped").isTrue();
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
            renewAt(11);
            assertThat(watchdog.isLeaseLost()).as("gone, with 19 s of the TTL left").isTrue();
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
        assertThat(told).isEmpty();
        assertThat(watchdog.isLeaseLost()).isFalse();
    }

    private void renewAt(long seconds) {
        clock.set(Duration.ofSeconds(seconds));
        scheduler.renewal.run();
    }

    /** Time moves only when the test says; the store's leases expire by it, so a lease outlives its TTL only if renewed. */
    private static final class SettableClock extends Clock {
        private final AtomicLong millis = new AtomicLong(1_000_000);
        private final long start = millis.get();

        void set(Duration sinceStart) {
            millis.set(start + sinceStart.toMillis());
        }

        @Override
        public long millis() {
            return millis.get();
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis());
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException("one zone is enough for a test");
        }
    }

    /** Keeps the watchdog's renewal for the test to run; the future it hands back is real, never due during a test. */
    private static final class ManualScheduler extends ScheduledThreadPoolExecutor {
        Runnable renewal;
        long delayMillis;
        ScheduledFuture<?> future;

        ManualScheduler() {
            super(1);
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
            renewal = command;
            delayMillis = unit.toMillis(delay);
            future = super.schedule(() -> { }, 1, TimeUnit.DAYS);
            return future;
        }
    }

    /** A lease of the in-memory store whose renewal times out while {@code failing}, as a store in a failover does. */
    private static final class FlakyLease implements Lease {
        private final Lease lease;
        volatile boolean failing;
        int renewals;

        FlakyLease(Lease lease) {
            this.lease = lease;
        }

        @Override
        public boolean renew(Duration ttl) {
            renewals++;
            if (failing) {
                throw new StoreUnavailableException("Redis at redis://127.0.0.1:6379 did not answer: Command timed out", null);
            }
            return lease.renew(ttl);
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
}
