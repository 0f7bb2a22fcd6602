package dev.fenced.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FencedObserver;
import dev.fenced.LeaseArguments;
import dev.fenced.StoreUnavailableException;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.internal.Redaction;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.Merchants;
import java.time.Duration;
import picocli.CommandLine.Option;

/** The connection options every command shares, each with an environment variable as fallback. */
public final class Connections {
    @Option(names = "--redis-url", paramLabel = "URL", defaultValue = "${env:FENCED_REDIS_URL}",
            description = "Redis, redis://[user:password@]host:port or rediss://... (env FENCED_REDIS_URL)")
    public String redisUrl;

    @Option(names = "--db-url", paramLabel = "JDBC_URL", defaultValue = "${env:FENCED_DB_URL}",
            description = "the database, jdbc:postgresql://... or jdbc:mariadb://... (env FENCED_DB_URL)")
    public String dbUrl;

    @Option(names = "--gateway-url", paramLabel = "URL", defaultValue = "${env:FENCED_GATEWAY_URL}",
            description = "the payment gateway, http://host:port (env FENCED_GATEWAY_URL)")
    public String gatewayUrl;

    public static String require(String value, String option, String env) {
        if (value == null || value.isBlank()) {
            throw new UsageException("needs " + option + " or the environment variable " + env);
        }
        return value;
    }

    /** How long a SIGTERM waits for the refunds in flight to finish before the process exits anyway. */
    public static final Duration DRAIN_TIME = Duration.ofSeconds(30);

    /** Refunds in flight under one token: what the settlement worker accepts, as a usage error. */
    public static int requireConcurrency(int concurrency) {
        if (concurrency < 1 || concurrency > 256) {
            throw new UsageException("--concurrency must be 1 to 256, got " + concurrency);
        }
        return concurrency;
    }

    /** The shortest lease the commands accept: below it, a JVM's start-up and one round trip outlast the lease. */
    public static final Duration MIN_TTL = Duration.ofMillis(100);

    public static Duration requireUsableTtl(Duration ttl) {
        LeaseArguments.requireValidTtl(ttl);
        if (ttl.compareTo(MIN_TTL) < 0) {
            throw new UsageException("--ttl must be at least " + MIN_TTL.toMillis() + "ms, got " + ttl.toMillis()
                    + "ms: every run would end in a lost lease");
        }
        return ttl;
    }

    /** A pooled, migrated database; fails fast with one line when it is unreachable. */
    public static HikariDataSource database(String jdbcUrl, int poolSize) {
        HikariDataSource dataSource = readOnlyDatabase(jdbcUrl, poolSize);
        try {
            RefundSchema.migrate(dataSource);
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
        return dataSource;
    }

    /** A pooled database, not migrated: commands that only read never write, not even the schema. */
    public static HikariDataSource readOnlyDatabase(String jdbcUrl, int poolSize) {
        if (!jdbcUrl.startsWith("jdbc:postgresql:") && !jdbcUrl.startsWith("jdbc:mariadb:") && !jdbcUrl.startsWith("jdbc:mysql:")) {
            throw new UsageException("database URL must start with jdbc:postgresql: or jdbc:mariadb:, got " + Redaction.describe(jdbcUrl));
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(poolSize);
        // Connections open as work needs them: a fleet of workers sized for its peak would otherwise
        // hold jobs x (concurrency + 2) connections each from the start, past a default PostgreSQL's 100.
        config.setMinimumIdle(Math.min(2, poolSize));
        config.setConnectionTimeout(5_000);
        config.setInitializationFailTimeout(1); // one attempt at start: an unreachable database is one line at once, not after retries
        config.setPoolName("fenced");
        HikariDataSource dataSource;
        try {
            dataSource = new HikariDataSource(config);
        } catch (RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            throw new StoreUnavailableException("database at " + Redaction.describe(jdbcUrl) + " is unreachable: "
                    + Redaction.scrub(String.valueOf(root.getMessage()), Redaction.secretsOf(jdbcUrl)), e);
        }
        return dataSource;
    }

    /** A Redis lease store whose counter is reseeded from the refunds' highest fence. */
    public static RedisLeaseStore leases(String redisUrl, HikariDataSource database, String ownerLabel) {
        return leases(redisUrl, database, ownerLabel, FencedObserver.NONE);
    }

    public static RedisLeaseStore leases(String redisUrl, HikariDataSource database, String ownerLabel, FencedObserver observer) {
        RedisLeaseStore.Builder builder = RedisLeaseStore.builder(redisUrl).observer(observer)
                .fenceFloor(JdbcFenceFloor.of(database, RefundSchema.table(), Merchants::merchantOf));
        if (ownerLabel != null) {
            builder.ownerLabel(ownerLabel);
        }
        return builder.build();
    }

    public static GatewayClient gateway(String url) {
        return GatewayClient.of(url, Duration.ofSeconds(5));
    }
}
