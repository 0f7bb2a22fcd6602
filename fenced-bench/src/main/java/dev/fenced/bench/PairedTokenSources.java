package dev.fenced.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.Lease;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.jdbc.JdbcTokenSource;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * Lease + token + release with the token from Redis (one script), from Redis in epochs drawn from a
 * database sequence (one script, the epoch drawn once), from a database counter row, and from a
 * database sequence, interleaved cycle by cycle (Redis, epochs, row, sequence, then back) so that
 * the four meet the same noise; the ratio of the totals against the Redis-issued cycle.
 */
final class PairedTokenSources {
    private PairedTokenSources() {
    }

    static String run(String redisUrl, String pgUrl, boolean quick) {
        int rounds = quick ? 300 : 3_000;
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(pgUrl);
        config.setMaximumPoolSize(2);
        String resource = "bench-paired-tokens:" + UUID.randomUUID();
        try (HikariDataSource db = new HikariDataSource(config)) {
            FencedSchema.migrate(db);
            try (RedisLeaseStore redis = RedisLeaseStore.builder(redisUrl).build();
                 RedisLeaseStore epochs = RedisLeaseStore.builder(redisUrl).tokens(TokenPolicy.epochs(JdbcSequenceTokenSource.epochs(db))).build();
                 RedisLeaseStore row = RedisLeaseStore.builder(redisUrl).tokens(TokenPolicy.durable(JdbcTokenSource.of(db))).build();
                 RedisLeaseStore sequence = RedisLeaseStore.builder(redisUrl).tokens(TokenPolicy.durable(JdbcSequenceTokenSource.of(db))).build()) {
                List<RedisLeaseStore> sides = List.of(redis, epochs, row, sequence);
                List<RedisLeaseStore> order = List.of(redis, epochs, row, sequence, sequence, row, epochs, redis);
                long[] nanos = new long[sides.size()];
                for (int round = -rounds / 5; round < rounds; round++) {
                    for (RedisLeaseStore store : order) {
                        int side = sides.indexOf(store);
                        long start = System.nanoTime();
                        Lease lease = store.tryAcquire(resource + ":" + side, Duration.ofSeconds(30)).orElseThrow();
                        lease.release();
                        long took = System.nanoTime() - start;
                        if (round >= 0) {
                            nanos[side] += took;
                        }
                    }
                }
                double cycles = rounds * 2.0;
                return "## Token sources, interleaved: lease + token + release\n\n"
                        + "| token issued by | cycles/s | time vs Redis-issued |\n|---|---:|---:|\n"
                        + String.format("| Redis (one script) | %,.0f | 1.00x |%n", cycles / (nanos[0] / 1e9))
                        + String.format("| Redis in epochs from a PostgreSQL sequence (`TokenPolicy.epochs`) | %,.0f | %.2fx |%n",
                        cycles / (nanos[1] / 1e9), (double) nanos[1] / nanos[0])
                        + String.format("| PostgreSQL counter row (`JdbcTokenSource`) | %,.0f | %.2fx |%n", cycles / (nanos[2] / 1e9),
                        (double) nanos[2] / nanos[0])
                        + String.format("| PostgreSQL sequence (`JdbcSequenceTokenSource`) | %,.0f | %.2fx |%n%n", cycles / (nanos[3] / 1e9),
                        (double) nanos[3] / nanos[0])
                        + "One thread, one resource per side, " + rounds + " rounds of Redis, epochs, row, sequence, sequence, row, epochs,"
                        + " Redis after " + rounds / 5 + " rounds of warm-up; the lease in Redis in all four.\n\n";
            }
        }
    }
}
