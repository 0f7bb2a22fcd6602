package dev.fenced.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.Lease;
import dev.fenced.LeaseStore;
import dev.fenced.LeaseView;
import dev.fenced.LeaseWatchdog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link LeaseStore} passes. A backend's test extends this class and supplies
 * the store; each test works on its own fresh resource name, so a shared server is fine. The suite
 * is checked against deliberately broken stores, which it must fail ({@code LeaseStoreContractSelfTest}).
 *
 * <p>The suite never sleeps: a TTL is read back through {@link #timeLeft} and run out by renewing
 * the lease to 1 ms ({@link #runOutTtl}), a lease is taken away by the subclass's
 * {@link #expireLeaseBehindItsBack} hook, and watchdog renewals run when the test moves a
 * {@link ManualScheduler}. It checks that the store's clock ends a lease, at 1 ms, and that a longer
 * TTL is recorded as asked; not that a 30 s lease ends at exactly 30 s, which would take 30 s.
 */
public abstract class LeaseStoreContract {

    /** The store under test. */
    protected abstract LeaseStore store();

    /** Deletes the live lease behind its holder's back, as an expiry would. */
    protected abstract void expireLeaseBehindItsBack(String resource);

    /**
     * The time the live lease on {@code resource} has left by the store's own clock (a Redis key's
     * PTTL), zero when none is live. The suite reads it instead of waiting for a TTL to run out on a
     * clock it cannot move.
     */
    protected abstract Duration timeLeft(String resource);

    /**
     * The longest the store keeps a lease asked for {@code asked}: the TTL as asked, unless the store
     * counts TTLs on a coarser grain and rounds up, never down (etcd: whole seconds, and a server
     * minimum of at least a second). Only such a store overrides it, to say by how much; a store that
     * keeps a lease shorter than asked fails the suite all the same.
     */
    protected Duration ttlAsKept(Duration asked) {
        return asked;
    }

    protected static String freshResource() {
        return "test:" + UUID.randomUUID();
    }

    @Test
    void grantsALeaseWithATokenAndRefusesASecondHolder() {
        String resource = freshResource();
        Lease lease = store().tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(lease.resource()).isEqualTo(resource);
        assertThat(lease.token()).isPositive();
        assertThat(lease.ownerId()).isNotBlank();

        assertThat(store().tryAcquire(resource, Duration.ofSeconds(10))).isEmpty();
        assertThat(lease.release()).isTrue();
        Lease next = store().tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(next.token()).isGreaterThan(lease.token());
        assertThat(next.ownerId()).isNotEqualTo(lease.ownerId());
        next.release();
    }

    @Test
    void tokensStrictlyIncreaseOverTenThousandAcquisitions() {
        String resource = freshResource();
        long previous = 0;
        for (int i = 0; i < 10_000; i++) {
            Lease lease = store().tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            assertThat(lease.token()).as("acquisition %d", i).isGreaterThan(previous);
            previous = lease.token();
            assertThat(lease.release()).isTrue();
        }
    }

    @Test
    void eightThreadsNeverHoldTheSameLiveLeaseAtOnce() throws Exception {
        String resource = freshResource();
        int threads = 8;
        int acquisitionsWanted = 4_000;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger acquisitions = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicLong lastTokenInside = new AtomicLong();
        AtomicInteger tokensOutOfOrder = new AtomicInteger();
        java.util.Set<Long> tokens = java.util.concurrent.ConcurrentHashMap.newKeySet();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    start.await();
                    while (acquisitions.get() < acquisitionsWanted) {
                        Optional<Lease> maybe = store().tryAcquire(resource, Duration.ofSeconds(30));
                        if (maybe.isEmpty()) {
                            // Busy: let the holder run. Seven threads spinning on two cores kept a
                            // descheduled holder waiting and made an in-memory store's run take 20 s.
                            Thread.yield();
                            continue;
                        }
                        Lease lease = maybe.get();
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        if (lease.token() <= lastTokenInside.getAndSet(lease.token())) {
                            tokensOutOfOrder.incrementAndGet();
                        }
                        tokens.add(lease.token());
                        acquisitions.incrementAndGet();
                        Thread.yield(); // a holder that stays a moment gives an overlapping grant the time to show
                        inside.decrementAndGet();
                        lease.release();
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> future : futures) {
                future.get(5, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(tokens).as("one token per grant, never reused").hasSize(acquisitions.get());
        assertThat(overlaps.get()).as("holders inside at once").isZero();
        assertThat(tokensOutOfOrder.get()).as("tokens not increasing in grant order").isZero();
    }

    @Test
    void aViewShowsTheHolderItsTimeLeftAndTheHighestToken() {
        String resource = freshResource();
        assertThat(store().view(resource).held()).as("never acquired").isFalse();
        Lease lease = store().tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        LeaseView held = store().view(resource);
        assertThat(held.holder()).isEqualTo(lease.ownerId());
        assertThat(held.timeLeft()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(10));
        assertThat(held.highestTokenIssued()).as("the highest token issued, or 0 when a separate source issued it")
                .satisfiesAnyOf(highest -> assertThat(highest).isZero(),
                        highest -> assertThat(highest).isGreaterThanOrEqualTo(lease.token()));
        assertThat(lease.release()).isTrue();
        LeaseView free = store().view(resource);
        assertThat(free.held()).as("released").isFalse();
        assertThat(free.timeLeft()).isZero();
    }

    @Test
    void aStaleHoldersReleaseAndRenewChangeNothing() {
        String resource = freshResource();
        Lease stale = store().tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        runOutTtl(stale);
        Lease current = store().tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();

        assertThat(stale.isHeld()).isFalse();
        assertThat(current.isHeld()).isTrue();
        assertThat(stale.release()).isFalse();
        assertThat(stale.renew(Duration.ofSeconds(10))).isFalse();
        assertThat(store().tryAcquire(resource, Duration.ofSeconds(10))).as("current lease survived").isEmpty();
        assertThat(current.token()).isGreaterThan(stale.token());
        assertThat(current.release()).isTrue();
        assertThat(current.release()).as("second release").isFalse();
    }

    /**
     * The store keeps the lease for its TTL and no longer: the time it has left is at most the TTL
     * asked for, and once that time is out by the store's clock the next holder gets a higher token.
     * The store's clock cannot be moved from here, so the test reads the time left instead of
     * waiting 300 ms, and then runs the TTL out in a millisecond ({@link #runOutTtl}).
     */
    @Test
    void aLeaseExpiresAfterItsTtlAndTheNextHolderGetsAHigherToken() {
        String resource = freshResource();
        Lease first = store().tryAcquire(resource, Duration.ofMillis(300)).orElseThrow();
        assertThat(timeLeft(resource)).as("time left of a 300 ms lease").isPositive().isLessThanOrEqualTo(ttlAsKept(Duration.ofMillis(300)));
        assertThat(store().tryAcquire(resource, Duration.ofSeconds(10))).isEmpty();
        runOutTtl(first);
        Lease second = store().tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(second.token()).isGreaterThan(first.token());
        second.release();
    }

    /** A lease nobody renews ends at the TTL it was acquired with, by the store's clock alone. */
    @Test
    void aLeaseNobodyRenewsEndsByItsOwnTtl() {
        String resource = freshResource();
        Lease lease = store().tryAcquire(resource, Duration.ofMillis(20)).orElseThrow();
        awaitEndedByItself(lease, "acquired for 20 ms");
        Lease next = store().tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(next.token()).isGreaterThan(lease.token());
        next.release();
    }

    @Test
    void renewExtendsOnlyTheOwnersLease() {
        String resource = freshResource();
        Lease lease = store().tryAcquire(resource, Duration.ofMillis(300)).orElseThrow();
        assertThat(lease.renew(Duration.ofSeconds(20))).isTrue();
        assertThat(timeLeft(resource)).as("renewed to 20 s").isGreaterThan(Duration.ofSeconds(10)).isLessThanOrEqualTo(Duration.ofSeconds(20));
        assertThat(store().tryAcquire(resource, Duration.ofSeconds(10))).as("renewed lease still live").isEmpty();
        lease.release();
    }

    @Test
    void rejectsInvalidArgumentsWithoutTakingALease() {
        String resource = freshResource();
        assertThatThrownBy(() -> store().tryAcquire(null, Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store().tryAcquire(" ", Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store().tryAcquire("x".repeat(500), Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store().tryAcquire(resource, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store().tryAcquire(resource, Duration.ofDays(2))).isInstanceOf(IllegalArgumentException.class);
        Lease lease = store().tryAcquire(resource, Duration.ofSeconds(5)).orElseThrow();
        assertThatThrownBy(() -> lease.renew(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
        lease.release();
    }

    /**
     * Renewals driven by a {@link ManualScheduler}: each period the test moves past renews the lease
     * to the watchdog's TTL (seen in the time the store says it has left, far above the 5 s it was
     * taken for; 5 s of real time, as the store counts it, for a slow machine to reach the first renewal), and the first renewal after the lease was taken away tells the listener, at once.
     */
    @Test
    void theWatchdogKeepsALiveLeaseAndReportsALostOne() {
        String resource = freshResource();
        Duration renewedTo = Duration.ofSeconds(60);
        Lease lease = store().tryAcquire(resource, Duration.ofSeconds(5)).orElseThrow();
        ManualScheduler scheduler = new ManualScheduler();
        List<Lease> lost = new ArrayList<>();
        try (LeaseWatchdog watchdog = LeaseWatchdog.start(lease, renewedTo, 1.0 / 3, (l, cause) -> lost.add(l), scheduler,
                scheduler.clock())) {
            assertThat(scheduler.advance(Duration.ofSeconds(20))).as("renewals in the first third of the TTL").isEqualTo(1);
            assertThat(timeLeft(resource)).as("renewed to the watchdog's TTL").isGreaterThan(Duration.ofSeconds(30));
            assertThat(store().tryAcquire(resource, Duration.ofSeconds(5))).as("kept alive past its TTL").isEmpty();
            assertThat(watchdog.isLeaseLost()).isFalse();

            expireLeaseBehindItsBack(resource);
            scheduler.advance(Duration.ofSeconds(20));
            assertThat(lost).as("listener told").containsExactly(lease);
            assertThat(watchdog.isLeaseLost()).isTrue();
        } finally {
            scheduler.shutdownNow();
        }
    }

    /**
     * Eighty watchdogs on one scheduler (one thread: the test's) renew all eighty leases; forty
     * leases taken at the same time with the same TTL and no watchdog are left as they were (the
     * control). That watchdogs on the shared threads need no thread each is LeaseWatchdogTest's.
     */
    @Test
    void watchdogsOnOneSchedulerKeepEveryLeaseAlive() {
        // 10 s: taking 120 leases on a slow cluster must not outlast the first ones before their renewal.
        Duration ttl = Duration.ofSeconds(10);
        Duration renewedTo = Duration.ofSeconds(60);
        List<Lease> renewed = new ArrayList<>();
        List<Lease> unrenewed = new ArrayList<>();
        for (int i = 0; i < 80; i++) {
            renewed.add(store().tryAcquire(freshResource(), ttl).orElseThrow());
        }
        for (int i = 0; i < 40; i++) {
            unrenewed.add(store().tryAcquire(freshResource(), ttl).orElseThrow());
        }
        ManualScheduler scheduler = new ManualScheduler();
        List<LeaseWatchdog> watchdogs = new ArrayList<>();
        AtomicInteger lost = new AtomicInteger();
        try {
            for (Lease lease : renewed) {
                watchdogs.add(LeaseWatchdog.start(lease, renewedTo, 1.0 / 3, (l, cause) -> lost.incrementAndGet(), scheduler,
                        scheduler.clock()));
            }
            assertThat(scheduler.advance(Duration.ofSeconds(20))).as("one renewal each").isEqualTo(80);
            assertThat(lost).as("leases reported lost").hasValue(0);
            assertThat(renewed).as("renewed leases: time left above the TTL they were taken for")
                    .allMatch(lease -> timeLeft(lease.resource()).compareTo(Duration.ofSeconds(30)) > 0);
            assertThat(unrenewed).as("control: leases without a watchdog keep at most their TTL")
                    .allMatch(lease -> timeLeft(lease.resource()).compareTo(ttl) <= 0);
        } finally {
            watchdogs.forEach(LeaseWatchdog::close);
            scheduler.shutdownNow();
            renewed.forEach(Lease::release);
            unrenewed.forEach(Lease::release);
        }
    }

    /**
     * Ends a lease the way its TTL does, by the store's own clock: renewed by its holder to 1 ms, then
     * read until the store no longer holds it, a millisecond later. Unlike {@link #expireLeaseBehindItsBack}
     * it leaves everything else the store keeps for the resource (its counter) as an expiry does.
     */
    protected void runOutTtl(Lease lease) {
        assertThat(lease.renew(Duration.ofMillis(1))).as("renewed to 1 ms").isTrue();
        awaitEndedByItself(lease, "renewed to 1 ms");
    }

    /** Returns once the store's clock has ended the lease; fails after 5 s. */
    private static void awaitEndedByItself(Lease lease, String how) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        // Not timeLeft: Redis answers a PTTL of 0 for a key in its last millisecond, still held.
        while (lease.isHeld()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("lease on " + lease.resource() + " " + how + " still live after 5 s");
            }
            Thread.onSpinWait(); // milliseconds by the store's clock: round trips, not worth a scheduler
        }
    }
}
