package dev.fenced.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.Lease;
import dev.fenced.LeaseStore;
import dev.fenced.embedded.EmbeddedEtcd;
import dev.fenced.etcd.EtcdLeaseStore;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcLeaseStore;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
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
        } finally {
            if (etcd != null) {
                etcd.close();
            }
        }
        return out.append("\nEach thread runs ").append(rounds).append(" rounds (after ").append(warmUp)
                .append(" of warm-up) of one cycle on every store, first to last and back; each thread has its own resource per store, so")
                .append(" no cycle waits for another holder. Redis: one Lettuce connection, tokens from its counter; Redis with epochs: the")
                .append(" same with its epochs from PostgreSQL's sequence (read once per epoch); the database store: one statement on")
                .append(" PostgreSQL (on MariaDB a short transaction) from a pool of 8, the lease and the token together; etcd: ")
                .append(etcd != null ? "an embedded single-member etcd" : withEtcd ? "the etcd at FENCED_ETCD_URL"
                        : "not measured (no etcd binary and no FENCED_ETCD_URL)")
                .append(" on one jetcd client, a lease grant, a transaction and a revoke per cycle.")
                .append(" The interval is the mean of the batch ratios ± 2 standard errors.\n\n").toString();
    }

    private static HikariDataSource pool(String jdbcUrl) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(8);
        config.setMinimumIdle(8);
        return new HikariDataSource(config);
    }
}
