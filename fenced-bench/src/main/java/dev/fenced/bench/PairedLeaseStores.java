package dev.fenced.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.Lease;
import dev.fenced.LeaseStore;
import dev.fenced.embedded.EmbeddedEtcd;
import dev.fenced.etcd.EtcdLeaseStore;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcLeaseStore;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.RefundSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Acquire + token + release on every lease store, interleaved cycle by cycle as
 * {@link PairedLeases} does: Redis with epochs, the database store on PostgreSQL and on MariaDB,
 * etcd, and Redis's own counter as the baseline, at 1 and 8 threads. Each store runs as a user
 * would build it: Redis on one Lettuce connection, the database stores on a pool of 8 connections,
 * etcd on one jetcd client.
 */
final class PairedLeaseStores {
    private PairedLeaseStores() {
    }

    static String run(String redisUrl, String pgUrl, String mariadbUrl, String etcdUrl, boolean quick) throws InterruptedException {
        int rounds = quick ? 60 : 1_500;
        int warmUp = quick ? 60 : 500;
        String settlement;
        StringBuilder out = new StringBuilder("## Choose a lease store: acquire + token + release on each, interleaved\n\n")
                .append("| threads | store | cycles/s | time per cycle vs Redis | 95 % interval |\n")
                .append("|---:|---|---:|---:|---:|\n");
        boolean withEtcd = etcdUrl != null || EmbeddedEtcd.isAvailable();
        EmbeddedEtcd etcd = etcdUrl == null && withEtcd ? EmbeddedEtcd.start() : null;
        String etcdAt = etcd != null ? etcd.endpoints() : etcdUrl;
        try (HikariDataSource pg = pool(pgUrl);
             HikariDataSource mariadb = mariadbUrl == null ? null : pool(mariadbUrl);
             RedisLeaseStore redis = RedisLeaseStore.builder(redisUrl).build();
             RedisLeaseStore redisEpochs = RedisLeaseStore.builder(redisUrl).keyPrefix("bench-epochs:")
                     .tokens(TokenPolicy.epochs(JdbcSequenceTokenSource.epochs(pg))).build();
             EtcdLeaseStore etcdStore = withEtcd ? EtcdLeaseStore.builder(etcdAt).build() : null) {
            FencedSchema.migrate(pg);
            if (mariadb != null) {
                FencedSchema.migrate(mariadb);
            }
            List<String> names = new ArrayList<>(List.of("Redis with epochs", "database (PostgreSQL)"));
            List<LeaseStore> stores = new ArrayList<>(List.of(redisEpochs, JdbcLeaseStore.builder(pg).build()));
            if (mariadb != null) {
                names.add("database (MariaDB)");
                stores.add(JdbcLeaseStore.builder(mariadb).build());
            }
            if (etcdStore != null) {
                names.add("etcd");
                stores.add(etcdStore);
            }
            names.add("Redis");
            stores.add(redis);
            for (int threads : List.of(1, 8)) {
                List<PairedLeases.Side> sides = new ArrayList<>();
                for (LeaseStore store : stores) {
                    List<String> resources = new ArrayList<>();
                    for (int i = 0; i < threads; i++) {
                        resources.add("bench:" + UUID.randomUUID());
                    }
                    sides.add(thread -> {
                        Lease lease = store.tryAcquire(resources.get(thread), Duration.ofSeconds(30))
                                .orElseThrow(() -> new IllegalStateException("lease not granted"));
                        lease.release();
                    });
                }
                out.append(PairedLeases.measure(threads, warmUp, rounds, names, sides));
            }
            settlement = settlementOnEachStore(pg, names, stores, quick);
        } finally {
            if (etcd != null) {
                etcd.close();
            }
        }
        return out.append("\nEach thread runs ").append(rounds).append(" rounds (after ").append(warmUp)
                .append(" of warm-up) of one cycle on every store, first to last and back; each thread has its own resource per store, so")
                .append(" no cycle waits for another holder. Redis: one Lettuce connection, tokens from its counter; Redis with epochs: the")
                .append(" same with its epochs from PostgreSQL's sequence (read once per epoch); the database store from a pool of 8: on")
                .append(" PostgreSQL one statement for the lease and its token, and one to release whose commit does not wait for the disk; on MariaDB a NEXTVAL and a guarded")
                .append(" UPDATE (or INSERT IGNORE), auto-committed, and one to release; etcd: ")
                .append(etcd != null ? "an embedded single-member etcd" : withEtcd ? "the etcd at FENCED_ETCD_URL"
                        : "not measured (no etcd binary and no FENCED_ETCD_URL)")
                .append(" on one jetcd client: a read of the lease key, a lease grant and a transaction to acquire, a revocation to release.")
                .append(" The interval is the mean of the batch ratios ± 2 standard errors.\n\n").append(settlement).toString();
    }

    /**
     * The settlement run of {@link SettlementThroughput} (1,200 refunds, 32 in flight, 25 ms gateway) under each store,
     * the stores' order rotated each round; the median of three rounds (one in quick mode), against Redis's.
     */
    private static String settlementOnEachStore(HikariDataSource pg, List<String> names, List<LeaseStore> stores, boolean quick) {
        int rounds = quick ? 1 : 3;
        int concurrency = 32;
        List<List<Double>> seconds = new ArrayList<>();
        stores.forEach(store -> seconds.add(new ArrayList<>()));
        try (HikariDataSource db = SettlementThroughput.pool(pg.getJdbcUrl(), concurrency);
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(SettlementThroughput.LATENCY).build())) {
            RefundSchema.migrate(db);
            SettlementThroughput.settleOnce(db, gateway, stores.get(stores.size() - 1), concurrency); // warms the JIT up, untimed
            for (int round = 0; round < rounds; round++) {
                for (int i = 0; i < stores.size(); i++) {
                    int side = (i + round) % stores.size();
                    seconds.get(side).add(SettlementThroughput.settleOnce(db, gateway, stores.get(side), concurrency));
                }
            }
        }
        double redis = median(seconds.get(stores.size() - 1));
        StringBuilder out = new StringBuilder("### The settlement run on each store: 1,200 refunds, 32 in flight, gateway latency 25 ms\n\n")
                .append("| store | seconds | refunds/s | vs Redis |\n|---|---:|---:|---:|\n");
        for (int side = 0; side < stores.size(); side++) {
            double s = median(seconds.get(side));
            out.append(String.format("| %s | %.2f | %,.0f | %.2fx |%n", names.get(side), s, 1200 / s, s / redis));
        }
        return out.append("\nThe refunds are in PostgreSQL whatever the store (the MariaDB store's leases are in MariaDB, its rows in")
                .append(" PostgreSQL); ").append(rounds == 1 ? "one round" : "the median of " + rounds + " rounds")
                .append(", the stores' order rotated each round, after one untimed run.\n\n").toString();
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        java.util.Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    private static HikariDataSource pool(String jdbcUrl) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(8);
        config.setMinimumIdle(8);
        return new HikariDataSource(config);
    }
}
