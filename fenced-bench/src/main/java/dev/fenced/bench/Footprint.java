package dev.fenced.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.Lease;
import dev.fenced.LeaseWatchdog;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.SettlementWorker;
import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Heap per held lease and per in-flight refund, from the used heap after full collections before
 * and after: what a worker with 10,000 held leases costs. Thread stacks are not heap and are not
 * counted; an in-flight refund holds one worker thread, and watchdogs share a few threads.
 */
final class Footprint {
    private static final int LEASES = 10_000;
    private static final int IN_FLIGHT = 200;

    private Footprint() {
    }

    static String run(String redisUrl, String pgUrl) throws Exception {
        double perLease;
        double perWatchdog;
        int watchdogThreads;
        try (RedisLeaseStore store = RedisLeaseStore.builder(redisUrl).build()) {
            store.tryAcquire("footprint:warm-up", Duration.ofMinutes(5)).orElseThrow().release();
            long before = usedHeap();
            List<Lease> held = new ArrayList<>(LEASES);
            String prefix = "footprint:" + UUID.randomUUID() + ":";
            for (int i = 0; i < LEASES; i++) {
                held.add(store.tryAcquire(prefix + i, Duration.ofMinutes(5)).orElseThrow());
            }
            long after = usedHeap();
            perLease = (after - before) / (double) LEASES;
            List<LeaseWatchdog> watchdogs = new ArrayList<>(LEASES);
            for (Lease lease : held) {
                watchdogs.add(LeaseWatchdog.start(lease, Duration.ofMinutes(5), (l, cause) -> { }));
            }
            perWatchdog = (usedHeap() - after) / (double) LEASES;
            watchdogThreads = (int) Thread.getAllStackTraces().keySet().stream()
                    .filter(thread -> thread.getName().startsWith("fenced-watchdog-")).count();
            watchdogs.forEach(LeaseWatchdog::close);
            for (Lease lease : held) {
                lease.release();
            }
        }

        double perRefund;
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(pgUrl);
        config.setMaximumPoolSize(IN_FLIGHT + 2);
        try (HikariDataSource db = new HikariDataSource(config);
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofSeconds(6)).build());
             RedisLeaseStore leases = RedisLeaseStore.builder(redisUrl).build()) {
            RefundSchema.migrate(db);
            String merchant = "footprint_" + UUID.randomUUID().toString().substring(0, 8);
            RefundSeeder.seed(db, merchant, merchant + "_r", IN_FLIGHT, new BigDecimal("14050.00"), "EUR");
            for (int i = 0; i < IN_FLIGHT + 2; i++) { // open the pool's connections before measuring
                db.getConnection().close();
            }
            AtomicInteger inFlight = new AtomicInteger();
            SettlementWorker worker = SettlementWorker.builder().leaseStore(leases).dataSource(db)
                    .gateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(30))).concurrency(IN_FLIGHT)
                    .listener(event -> {
                        if (event.type() == dev.fenced.settlement.SettlementEvent.Type.CLAIMED) {
                            inFlight.incrementAndGet();
                        }
                    }).build();
            long before = usedHeap();
            CompletableFuture<?> run = CompletableFuture.runAsync(() -> worker.settle(merchant));
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (inFlight.get() < IN_FLIGHT && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            Thread.sleep(300);
            long during = usedHeap();
            perRefund = (during - before) / (double) inFlight.get();
            run.get();
        }
        return "## Memory\n\n| what | heap |\n|---|---:|\n"
                + String.format("| per held lease (%,d held) | %,.0f bytes |%n", LEASES, perLease)
                + String.format("| 10,000 held leases | %,.1f MiB |%n", perLease * 10_000 / (1024 * 1024))
                + String.format("| per renewal watchdog (%,d running, %d watchdog threads in the process) | %,.0f bytes |%n", LEASES,
                        watchdogThreads, perWatchdog)
                + String.format("| per in-flight refund (%d in flight, gateway answering after 6 s) | %,.0f bytes |%n%n", IN_FLIGHT, perRefund);
    }

    private static long usedHeap() throws InterruptedException {
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
