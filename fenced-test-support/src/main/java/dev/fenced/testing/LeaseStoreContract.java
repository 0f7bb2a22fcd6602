package dev.fenced.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.Lease;
import dev.fenced.LeaseStore;
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
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link LeaseStore} passes. A backend's test extends this class and supplies
 * the store; each test works on its own fresh resource name, so a shared server is fine. The suite
 * is checked against deliberately broken stores, which it must fail ({@code LeaseStoreContractSelfTest}).
 */
public abstract class LeaseStoreContract {

    /** The store under test. */
    protected abstract LeaseStore store();

    /** Deletes the live lease behind its holder's back, as an expiry would. */
    protected abstract void expireLeaseBehindItsBack(String resource);

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
    void aStaleHoldersReleaseAndRenewChangeNothing() throws Exception {
        String resource = freshResource();
        Lease stale = store().tryAcquire(resource, Duration.ofMillis(100)).orElseThrow();
        Lease current = awaitLease(resource, Duration.ofSeconds(10));

        assertThat(stale.isHeld()).isFalse();
        assertThat(current.isHeld()).isTrue();
        assertThat(stale.release()).isFalse();
        assertThat(stale.renew(Duration.ofSeconds(10))).isFalse();
        assertThat(store().tryAcquire(resource, Duration.ofSeconds(10))).as("current lease survived").isEmpty();
        assertThat(current.token()).isGreaterThan(stale.token());
        assertThat(current.release()).isTrue();
        assertThat(current.release()).as("second release").isFalse();
    }

    @Test
    void aLeaseExpiresAfterItsTtlAndTheNextHolderGetsAHigherToken() throws Exception {
        String resource = freshResource();
        Lease first = store().tryAcquire(resource, Duration.ofMillis(300)).orElseThrow();
        assertThat(store().tryAcquire(resource, Duration.ofSeconds(10))).isEmpty();
        Lease second = awaitLease(resource, Duration.ofSeconds(10));
        assertThat(second.token()).isGreaterThan(first.token());
        second.release();
    }

    @Test
    void renewExtendsOnlyTheOwnersLease() throws Exception {
        String resource = freshResource();
        Lease lease = store().tryAcquire(resource, Duration.ofMillis(300)).orElseThrow();
        assertThat(lease.renew(Duration.ofSeconds(20))).isTrue();
        Thread.sleep(600);
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

    @Test
    void theWatchdogKeepsALiveLeaseAndReportsALostOne() throws Exception {
        String resource = freshResource();
        // 1.5 s: renewals every 500 ms leave a second of slack for a stalled 2-core machine running six cluster nodes.
        Lease lease = store().tryAcquire(resource, Duration.ofMillis(1_500)).orElseThrow();
        AtomicReference<Lease> lost = new AtomicReference<>();
        CountDownLatch told = new CountDownLatch(1);
        try (LeaseWatchdog watchdog = LeaseWatchdog.start(lease, Duration.ofMillis(1_500), (l, cause) -> {
            lost.set(l);
            told.countDown();
        })) {
            Thread.sleep(2_500);
            assertThat(store().tryAcquire(resource, Duration.ofSeconds(5))).as("kept alive past its TTL").isEmpty();
            assertThat(watchdog.isLeaseLost()).isFalse();

            expireLeaseBehindItsBack(resource);
            assertThat(told.await(5, TimeUnit.SECONDS)).as("listener told").isTrue();
            assertThat(lost.get()).isSameAs(lease);
            assertThat(watchdog.isLeaseLost()).isTrue();
        }
    }

    /**
     * Forty watchdogs on one caller's thread and forty on the shared threads keep all eighty leases
     * past their TTL without a thread per lease; forty leases with no watchdog, taken at the same
     * time with the same TTL, expire (the control).
     */
    @Test
    void watchdogsShareAFewThreadsAndKeepEveryLeaseAlive() throws Exception {
        Duration ttl = Duration.ofMillis(900);
        List<Lease> renewed = new ArrayList<>();
        List<Lease> unrenewed = new ArrayList<>();
        for (int i = 0; i < 80; i++) {
            renewed.add(store().tryAcquire(freshResource(), ttl).orElseThrow());
        }
        for (int i = 0; i < 40; i++) {
            unrenewed.add(store().tryAcquire(freshResource(), ttl).orElseThrow());
        }
        ScheduledExecutorService oneThread = Executors.newSingleThreadScheduledExecutor();
        List<LeaseWatchdog> watchdogs = new ArrayList<>();
        AtomicInteger lost = new AtomicInteger();
        try {
            for (int i = 0; i < renewed.size(); i++) {
                watchdogs.add(i < 40
                        ? LeaseWatchdog.start(renewed.get(i), ttl, 1.0 / 3, (l, cause) -> lost.incrementAndGet(), oneThread)
                        : LeaseWatchdog.start(renewed.get(i), ttl, (l, cause) -> lost.incrementAndGet()));
            }
            long watchdogThreads = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().startsWith("fenced-watchdog-")).count();
            assertThat(watchdogThreads).as("shared watchdog threads").isLessThanOrEqualTo(Math.max(2, Runtime.getRuntime().availableProcessors()));

            Thread.sleep(2_500);
            assertThat(lost).as("leases reported lost").hasValue(0);
            assertThat(renewed).as("renewed leases still held").allMatch(Lease::isHeld);
            assertThat(unrenewed).as("control: leases without a watchdog expired").noneMatch(Lease::isHeld);
        } finally {
            watchdogs.forEach(LeaseWatchdog::close);
            oneThread.shutdownNow();
            renewed.forEach(Lease::release);
        }
    }

    /** Polls until the lease is granted: waiting out a TTL, not standing in for a pause. */
    protected Lease awaitLease(String resource, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            Optional<Lease> lease = store().tryAcquire(resource, Duration.ofSeconds(10));
            if (lease.isPresent()) {
                return lease.get();
            }
            Thread.sleep(20);
        }
        throw new AssertionError("lease on " + resource + " not granted within " + within);
    }
}
