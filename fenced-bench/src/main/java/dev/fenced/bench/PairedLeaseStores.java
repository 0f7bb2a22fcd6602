package dev.fenced.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.Lease;
import dev.fenced.LeaseStore;
import dev.fenced.embedded.EmbeddedEtcd;
import dev.fenced.embedded.EmbeddedRedis;
import dev.fenced.etcd.EtcdLeaseStore;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcLeaseStore;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.RefundSchema;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
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

    static String run(String redisUrl, String pgUrl, String mariadbUrl, String etcdUrl, boolean quick) throws Exception {
        int rounds = quick ? 60 : 1_500;
        int warmUp = quick ? 60 : 500;
        String settlement;
        String durableVersion;
        StringBuilder out = new StringBuilder("## Choose a lease store: acquire + token + release on each, interleaved\n\n")
                .append("| threads | store | cycles/s | time per cycle vs Redis | 95 % interval |\n")
                .append("|---:|---|---:|---:|---:|\n");
        boolean withEtcd = etcdUrl != null || EmbeddedEtcd.isAvailable();
        EmbeddedEtcd etcd = etcdUrl == null && withEtcd ? EmbeddedEtcd.start() : null;
        String etcdAt = etcd != null ? etcd.endpoints() : etcdUrl;
        Path appendOnlyDir = Files.createTempDirectory("fenced-bench-aof");
        try (HikariDataSource pg = pool(pgUrl);
             HikariDataSource mariadb = mariadbUrl == null ? null : pool(mariadbUrl);
             StatementsAlone statementsAlone = new StatementsAlone(pgUrl);
             EmbeddedRedis durableServer = EmbeddedRedis.startDurable(appendOnlyDir);
             RedisLeaseStore durableRedis = RedisLeaseStore.builder(durableServer.uri()).build();
             RedisLeaseStore redis = RedisLeaseStore.builder(redisUrl).build();
             RedisLeaseStore redisEpochs = RedisLeaseStore.builder(redisUrl).keyPrefix("bench-epochs:")
                     .tokens(TokenPolicy.epochs(JdbcSequenceTokenSource.epochs(pg))).build();
             EtcdLeaseStore etcdStore = withEtcd ? EtcdLeaseStore.builder(etcdAt).build() : null) {
            durableVersion = redisVersion(durableServer.uri());
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
            // Two references that are not stores of their own: what the database store's statements cost
            // without the store, and what Redis costs when it flushes every write as a commit does.
            List<String> cycleNames = new ArrayList<>(names.subList(0, names.size() - 1));
            cycleNames.addAll(List.of("PostgreSQL statements alone", "Redis, fsync on every write", "Redis"));
            for (int threads : List.of(1, 8)) {
                List<PairedLeases.Side> sides = new ArrayList<>();
                for (LeaseStore store : stores.subList(0, stores.size() - 1)) {
                    sides.add(cycleOn(store, threads));
                }
                sides.add(statementsAlone.side(threads));
                sides.add(cycleOn(durableRedis, threads));
                sides.add(cycleOn(redis, threads));
                out.append(PairedLeases.measure(threads, warmUp, rounds, cycleNames, sides));
            }
            settlement = settlementOnEachStore(pg, names, stores, quick);
        } finally {
            if (etcd != null) {
                etcd.close();
            }
            deleteQuietly(appendOnlyDir);
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
                .append(" PostgreSQL statements alone: the database store's two statements, with the same timeout, on one connection per")
                .append(" thread held for the run, no pool and no store. Redis, fsync on every write: an embedded redis-server ")
                .append(durableVersion).append(" with appendonly yes and appendfsync always, one Lettuce connection.")
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

    private static PairedLeases.Side cycleOn(LeaseStore store, int threads) {
        List<String> resources = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            resources.add("bench:" + UUID.randomUUID());
        }
        return thread -> {
            Lease lease = store.tryAcquire(resources.get(thread), Duration.ofSeconds(30))
                    .orElseThrow(() -> new IllegalStateException("lease not granted"));
            lease.release();
        };
    }

    /**
     * The database store's PostgreSQL statements (as {@code LeaseSql.Postgres} writes them for
     * {@code fence_lease}) on one connection per thread, held for the run: the floor of the
     * database store, what its own code adds being the difference.
     */
    private static final class StatementsAlone implements AutoCloseable {
        private static final String ACQUIRE = "INSERT INTO fence_lease AS lease (resource, owner_id, token, expires_at)"
                + " VALUES (?, ?, nextval('fence_token_seq'), clock_timestamp() + ? * INTERVAL '1 millisecond')"
                + " ON CONFLICT (resource) DO UPDATE SET owner_id = EXCLUDED.owner_id, token = EXCLUDED.token,"
                + " expires_at = EXCLUDED.expires_at WHERE (lease.owner_id IS NULL OR lease.expires_at <= clock_timestamp())"
                + " AND lease.token < EXCLUDED.token RETURNING lease.token";
        private static final String RELEASE = "UPDATE fence_lease SET owner_id = NULL, expires_at = clock_timestamp()"
                + " FROM (SELECT set_config('synchronous_commit', 'off', true)) AS relaxed_commit"
                + " WHERE resource = ? AND owner_id = ? AND token = ? AND expires_at > clock_timestamp()";
        private static final int TIMEOUT_SECONDS = 5;

        private final List<Connection> connections = new ArrayList<>();

        StatementsAlone(String pgUrl) throws SQLException {
            for (int i = 0; i < 8; i++) {
                connections.add(DriverManager.getConnection(pgUrl));
            }
        }

        PairedLeases.Side side(int threads) {
            List<String> resources = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                resources.add("bench:" + UUID.randomUUID());
            }
            return thread -> {
                Connection c = connections.get(thread);
                String resource = resources.get(thread);
                try {
                    long token;
                    try (PreparedStatement acquire = c.prepareStatement(ACQUIRE)) {
                        acquire.setQueryTimeout(TIMEOUT_SECONDS);
                        acquire.setString(1, resource);
                        acquire.setString(2, "bench");
                        acquire.setLong(3, 30_000);
                        try (ResultSet rs = acquire.executeQuery()) {
                            if (!rs.next()) {
                                throw new IllegalStateException("lease not granted");
                            }
                            token = rs.getLong(1);
                        }
                    }
                    try (PreparedStatement release = c.prepareStatement(RELEASE)) {
                        release.setQueryTimeout(TIMEOUT_SECONDS);
                        release.setString(1, resource);
                        release.setString(2, "bench");
                        release.setLong(3, token);
                        if (release.executeUpdate() != 1) {
                            throw new IllegalStateException("lease not released");
                        }
                    }
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            };
        }

        @Override
        public void close() throws SQLException {
            for (Connection c : connections) {
                c.close();
            }
        }
    }

    private static String redisVersion(String uri) {
        RedisClient client = RedisClient.create(uri);
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            return connection.sync().info("server").lines().filter(line -> line.startsWith("redis_version:"))
                    .map(line -> line.substring("redis_version:".length()).strip()).findFirst().orElse("(version unknown)");
        } finally {
            client.shutdown();
        }
    }

    private static void deleteQuietly(Path dir) {
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind
        }
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
