package dev.fenced.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.LeaseStore;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.SettlementOutcome;
import dev.fenced.settlement.SettlementWorker;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Settles 1,200 refunds against a gateway with 25 ms latency at several in-flight concurrencies,
 * and compares each with its limit, min(concurrency / latency, the database's commit rate / 2),
 * where the commit rate is measured in the same run with the same number of connections.
 */
final class SettlementThroughput {
    static final Duration LATENCY = Duration.ofMillis(25);
    private static final int REFUNDS = 1200;

    private SettlementThroughput() {
    }

    static String run(String redisUrl, String pgUrl, boolean quick) throws Exception {
        StringBuilder out = new StringBuilder("## Settlement throughput: 1,200 refunds, gateway latency 25 ms\n\n")
                .append("| in flight | seconds | refunds/s | DB commits/s | limit refunds/s | limit / measured |\n")
                .append("|---:|---:|---:|---:|---:|---:|\n");
        List<Integer> concurrencies = quick ? List.of(8, 32) : List.of(1, 8, 32, 64);
        // One untimed run first, so that the JIT has compiled the worker, the HTTP client and server
        // and the JDBC driver before the first timed run, as JMH's warm-up iterations do.
        settleOnce(redisUrl, pgUrl, 32);
        for (int concurrency : concurrencies) {
            double commitsPerSecond;
            try (HikariDataSource db = pool(pgUrl, concurrency)) {
                commitsPerSecond = commitRate(db, concurrency, quick ? Duration.ofSeconds(1) : Duration.ofSeconds(3));
            }
            double seconds = medianSeconds(redisUrl, pgUrl, concurrency, concurrency == 1 ? 1 : 3);
            double measured = REFUNDS / seconds;
            double limit = Math.min(concurrency / (LATENCY.toMillis() / 1000.0), commitsPerSecond / 2);
            out.append(String.format("| %d | %.2f | %,.0f | %,.0f | %,.0f | %.2fx |%n", concurrency, seconds, measured,
                    commitsPerSecond, limit, limit / measured));
        }
        return out.append("\nThe limit counts the gateway's latency and two commits per refund (claim and confirm, as a worker")
                .append(" with one refund in flight pays them); the worker also reads the batch and makes one HTTP call per refund,")
                .append(" which the limit leaves out. An untimed run at 32 in flight warms the JIT up first; each row above 1 in flight")
                .append(" is the median of three runs.\n\n").toString();
    }

    /** The median of {@code runs} settlements; one run at 1 in flight takes 40 s, so that one runs once. */
    private static double medianSeconds(String redisUrl, String pgUrl, int concurrency, int runs) throws Exception {
        List<Double> seconds = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            seconds.add(settleOnce(redisUrl, pgUrl, concurrency));
        }
        Collections.sort(seconds);
        return seconds.get(runs / 2);
    }

    /** Seeds 1,200 refunds for a new merchant and settles them; returns the seconds the settlement took. */
    private static double settleOnce(String redisUrl, String pgUrl, int concurrency) throws Exception {
        try (HikariDataSource db = pool(pgUrl, concurrency);
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(LATENCY).build())) {
            RefundSchema.migrate(db);
            try (RedisLeaseStore leases = RedisLeaseStore.builder(redisUrl)
                    .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf))).build()) {
                return settleOnce(db, gateway, leases, concurrency);
            }
        }
    }

    /** Seeds 1,200 refunds for a new merchant in {@code db} and settles them under {@code leases}; the seconds it took. */
    static double settleOnce(HikariDataSource db, PaymentGateway gateway, LeaseStore leases, int concurrency) {
        String merchant = "bench_" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(db, merchant, merchant + "_r", REFUNDS, new BigDecimal("84300.00"), "EUR");
        SettlementWorker worker = SettlementWorker.builder().leaseStore(leases).dataSource(db)
                .gateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(10))).concurrency(concurrency).build();
        long start = System.nanoTime();
        SettlementOutcome outcome = worker.settle(merchant);
        double seconds = (System.nanoTime() - start) / 1e9;
        if (outcome.result() != SettlementOutcome.Result.COMPLETED || outcome.sent() != REFUNDS) {
            throw new IllegalStateException("settlement did not complete: " + outcome);
        }
        return seconds;
    }

    static HikariDataSource pool(String pgUrl, int concurrency) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(pgUrl);
        config.setMaximumPoolSize(concurrency + 2);
        return new HikariDataSource(config);
    }

    /** Auto-commit UPDATEs per second from {@code connections} threads, each on its own row; the fleet section uses it too. */
    static double commitRate(HikariDataSource db, int connections, Duration duration) throws Exception {
        String table = "bench_commit_rate";
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
            s.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY, fence BIGINT NOT NULL)");
            for (int i = 0; i < connections; i++) {
                s.execute("INSERT INTO " + table + " VALUES (" + i + ", 0)");
            }
        }
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(connections);
        List<Future<Long>> counts = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < connections; i++) {
            int row = i;
            counts.add(pool.submit(() -> {
                long n = 0;
                try (Connection c = db.getConnection();
                     PreparedStatement update = c.prepareStatement("UPDATE " + table + " SET fence = fence + 1 WHERE id = ?")) {
                    update.setInt(1, row);
                    while (!stop.get()) {
                        update.executeUpdate();
                        n++;
                    }
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
                return n;
            }));
        }
        Thread.sleep(duration.toMillis());
        stop.set(true);
        long total = 0;
        for (Future<Long> count : counts) {
            total += count.get();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        pool.shutdown();
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE " + table);
        }
        return total / seconds;
    }
}
