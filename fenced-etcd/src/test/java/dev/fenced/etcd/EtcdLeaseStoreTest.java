package dev.fenced.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.FencedExecutor;
import dev.fenced.FencedObserver;
import dev.fenced.Lease;
import dev.fenced.LeaseStore;
import dev.fenced.StoreUnavailableException;
import dev.fenced.testing.LeaseStoreContract;
import dev.fenced.testing.ManualScheduler;
import dev.fenced.testing.servers.TestEtcd;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class EtcdLeaseStoreTest extends LeaseStoreContract {
    private static EtcdLeaseStore store;
    private static Client admin;
    private static long minimumTtlSeconds;

    @BeforeAll
    static void connect() {
        store = EtcdLeaseStore.builder(TestEtcd.endpoints()).build();
        admin = Client.builder().endpoints(TestEtcd.endpoints().split(",")).build();
        // What the server grants for the shortest TTL there is: its minimum.
        io.etcd.jetcd.lease.LeaseGrantResponse shortest = await(admin.getLeaseClient().grant(1));
        minimumTtlSeconds = shortest.getTTL();
        await(admin.getLeaseClient().revoke(shortest.getID()));
    }

    @AfterAll
    static void disconnect() {
        if (store != null) {
            store.close();
            admin.close();
        }
    }

    @Override
    protected LeaseStore store() {
        return store;
    }

    /** What the leader does when a lease's TTL runs out: revokes the etcd lease, and the key goes with it. */
    @Override
    protected void expireLeaseBehindItsBack(String resource) {
        long etcdLease = await(admin.getKVClient().get(EtcdLeaseStore.bytes(store.leaseKey(resource)))).getKvs().get(0).getLease();
        await(admin.getLeaseClient().revoke(etcdLease));
    }

    @Override
    protected Duration timeLeft(String resource) {
        return store.view(resource).timeLeft();
    }

    /**
     * etcd keeps a lease whole seconds, rounded up, and at least its minimum: 1 s on the embedded
     * servers' 500 ms elections, 2 s on an etcd with its defaults named by {@code FENCED_ETCD_URL}.
     */
    @Override
    protected Duration ttlAsKept(Duration asked) {
        return Duration.ofSeconds(Math.max(EtcdLeaseStore.ttlSeconds(asked), minimumTtlSeconds));
    }

    private static <T> T await(java.util.concurrent.CompletableFuture<T> future) {
        try {
            return future.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static KeyValue leaseKeyOf(String resource) {
        return await(admin.getKVClient().get(EtcdLeaseStore.bytes(store.leaseKey(resource)))).getKvs().get(0);
    }

    @Test
    void theTokenIsTheRevisionOfTheGrantsWriteInTheLog() {
        String resource = freshResource();
        Lease lease = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        KeyValue key = leaseKeyOf(resource);
        assertThat(key.getValue().toString(StandardCharsets.UTF_8)).isEqualTo(lease.ownerId());
        assertThat(key.getCreateRevision()).as("no offset: the token is the revision").isEqualTo(lease.token());
        assertThat(store.leaseKey(resource)).isEqualTo("fenced/lease/" + resource);
        lease.release();
    }

    @Test
    void aTtlIsRoundedUpToWholeSecondsNeverDown() {
        assertThat(EtcdLeaseStore.ttlSeconds(Duration.ofMillis(1))).isEqualTo(1);
        assertThat(EtcdLeaseStore.ttlSeconds(Duration.ofMillis(1000))).isEqualTo(1);
        assertThat(EtcdLeaseStore.ttlSeconds(Duration.ofMillis(1001))).isEqualTo(2);
        assertThat(EtcdLeaseStore.ttlSeconds(Duration.ofMillis(2500))).isEqualTo(3);
        String resource = freshResource();
        Lease lease = store.tryAcquire(resource, Duration.ofMillis(1500)).orElseThrow();
        long granted = await(admin.getLeaseClient().timeToLive(leaseKeyOf(resource).getLease(), io.etcd.jetcd.options.LeaseOption.DEFAULT))
                .getGrantedTTL();
        assertThat(granted).as("1.5 s asked, granted by etcd").isEqualTo(Math.max(2, minimumTtlSeconds));
        lease.release();
    }

    @Test
    void aStoredFenceAboveTheRevisionRaisesTheOffsetAndTokensKeepRising() {
        String resource = freshResource();
        List<Long> raised = new CopyOnWriteArrayList<>();
        try (EtcdLeaseStore observed = EtcdLeaseStore.builder(TestEtcd.endpoints()).observer(new FencedObserver() {
            @Override
            public void counterRaised(String r, long storedFence) {
                raised.add(storedFence);
            }
        }).build()) {
            Lease first = observed.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            first.release();
            long fence = 1_000_000_000L; // a Redis counter's fence from before the move, far above etcd's revision
            observed.observeStoredFence(resource, fence);
            assertThat(raised).containsExactly(fence);
            long previous = fence;
            for (int i = 0; i < 20; i++) {
                Lease lease = observed.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
                assertThat(lease.token()).as("acquisition %d after the fence", i).isGreaterThan(previous);
                previous = lease.token();
                assertThat(observed.view(resource).highestTokenIssued()).isEqualTo(lease.token());
                lease.release();
            }
            observed.observeStoredFence(resource, 5); // a lower fence: nothing to raise, nothing lowered
            observed.observeStoredFence(resource, previous - 1);
            assertThat(raised).as("only the fence above the tokens raised anything").containsExactly(fence);
            Lease after = observed.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            assertThat(after.token()).isGreaterThan(previous);
            after.release();
        }
    }

    /** Eight processes' worth of raises at once, each to its own fence: the offset ends at the highest, never lowered by a late one. */
    @Test
    void concurrentRaisesOfTheOffsetKeepTheHighest() throws Exception {
        String resource = freshResource();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> raises = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                long fence = 10_000_000L * (t + 1);
                raises.add(pool.submit(() -> store.observeStoredFence(resource, fence)));
            }
            for (Future<?> raise : raises) {
                raise.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        Lease lease = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(lease.token()).isGreaterThan(80_000_000L);
        lease.release();
    }

    @Test
    void ownerIdsCarryTheLabelAndTheKeysThePrefix() {
        String resource = freshResource();
        try (EtcdLeaseStore labelled = EtcdLeaseStore.builder(TestEtcd.endpoints()).ownerLabel("worker-7").keyPrefix("app1/").build()) {
            Lease lease = labelled.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            assertThat(lease.ownerId()).startsWith("worker-7/");
            assertThat(labelled.leaseKey(resource)).isEqualTo("app1/lease/" + resource);
            assertThat(store.tryAcquire(resource, Duration.ofSeconds(10))).as("another prefix shares nothing").isPresent()
                    .hasValueSatisfying(other -> assertThat(other.token()).isGreaterThan(lease.token()))
                    .get().satisfies(Lease::release);
            lease.release();
        }
    }

    @Test
    void aStoreOnTheCallersClientLeavesItOpen() {
        String resource = freshResource();
        try (Client own = Client.builder().endpoints(TestEtcd.endpoints().split(",")).build()) {
            EtcdLeaseStore onClient = EtcdLeaseStore.builder(own).build();
            onClient.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow().release();
            onClient.close();
            assertThat(await(own.getKVClient().get(EtcdLeaseStore.bytes("any"))).getCount()).as("the client still answers").isZero();
        }
    }

    @Test
    void malformedEndpointsAreRefusedWithTheReason() {
        assertThatThrownBy(() -> EtcdLeaseStore.builder("127.0.0.1:2379")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("http://");
        assertThatThrownBy(() -> EtcdLeaseStore.builder("http://127.0.0.1")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs a host and a port");
        assertThatThrownBy(() -> EtcdLeaseStore.builder("http://a:1,,http://b:2")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty entry");
        assertThatThrownBy(() -> EtcdLeaseStore.builder("https://a:2379")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("TLS");
        assertThatThrownBy(() -> EtcdLeaseStore.builder("http://root:s3cret-pw@a:2379/v3")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining("s3cret-pw");
        assertThatThrownBy(() -> EtcdLeaseStore.builder(" ")).isInstanceOf(IllegalArgumentException.class);
    }

    /** Nothing listens on the port: the bound fires, the message says what waited on what, and not the password. */
    @Test
    void anUnreachableEtcdIsUnavailableWithinTheBoundWithoutItsPassword() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Duration bound = Duration.ofMillis(800);
        try (EtcdLeaseStore unreachable = EtcdLeaseStore.builder("http://root:s3cret-pw@127.0.0.1:" + port).requestTimeout(bound).build()) {
            long started = System.nanoTime();
            assertThatThrownBy(() -> unreachable.tryAcquire("settle:m_1", Duration.ofSeconds(10)))
                    .isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("tryAcquire(settle:m_1)")
                    .hasMessageContaining("http://127.0.0.1:" + port)
                    .hasMessageNotContaining("s3cret-pw")
                    .satisfies(e -> assertThat(String.valueOf(e.getCause())).doesNotContain("s3cret-pw"));
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            assertThat(took).as("within the bound, and not much over it").isLessThan(bound.plusMillis(1500));
        }
    }

    /** The watchdog's renewals through a {@link ManualScheduler}: the same-TTL renewal is one keep-alive, kept in etcd. */
    @Test
    void theWatchdogRenewsWithKeepAlivesAtTheSameTtl() {
        String resource = freshResource();
        Lease lease = store.tryAcquire(resource, Duration.ofSeconds(30)).orElseThrow();
        long etcdLease = leaseKeyOf(resource).getLease();
        ManualScheduler scheduler = new ManualScheduler();
        try (dev.fenced.LeaseWatchdog watchdog = dev.fenced.LeaseWatchdog.start(lease, Duration.ofSeconds(30), 1.0 / 3, (l, cause) -> {
        }, scheduler, scheduler.clock())) {
            assertThat(scheduler.advance(Duration.ofSeconds(30))).isEqualTo(3);
            assertThat(watchdog.isLeaseLost()).isFalse();
            assertThat(leaseKeyOf(resource).getLease()).as("kept alive, not moved to another etcd lease").isEqualTo(etcdLease);
        } finally {
            scheduler.shutdownNow();
            lease.release();
        }
    }

    /** {@link FencedExecutor} on etcd: the task runs with the grant's token, renewals run while it does, and a lost lease is reported. */
    @Test
    void theFencedExecutorRunsRenewsAndReportsALostLease() {
        String resource = freshResource();
        ManualScheduler scheduler = new ManualScheduler();
        try {
            FencedExecutor executor = FencedExecutor.builder(store).ttl(Duration.ofSeconds(6)).scheduler(scheduler).clock(scheduler.clock()).build();
            FencedExecutor.Outcome<Long> kept = executor.execute(resource, lease -> {
                scheduler.advance(Duration.ofSeconds(10));
                assertThat(lease.isHeld()).isTrue();
                assertThat(store.tryAcquire(resource, Duration.ofSeconds(5))).as("held while the task runs").isEmpty();
                return lease.token();
            });
            assertThat(kept.status()).isEqualTo(FencedExecutor.Status.EXECUTED);
            assertThat(kept.result()).isEqualTo(kept.token()).isPositive();
            assertThat(kept.leaseLostWhileRunning()).isFalse();
            assertThat(store.view(resource).held()).as("released after the run").isFalse();

            FencedExecutor.Outcome<Long> lost = executor.execute(resource, lease -> {
                expireLeaseBehindItsBack(resource);
                scheduler.advance(Duration.ofSeconds(3));
                return lease.token();
            });
            assertThat(lost.token()).isGreaterThan(kept.token());
            assertThat(lost.leaseLostWhileRunning()).isTrue();

            Lease other = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            FencedExecutor.Outcome<Long> busy = executor.execute(resource, Lease::token);
            assertThat(busy.status()).isEqualTo(FencedExecutor.Status.BUSY);
            other.release();
        } finally {
            scheduler.shutdownNow();
        }
    }
}
