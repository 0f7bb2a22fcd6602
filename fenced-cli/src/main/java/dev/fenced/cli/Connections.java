package dev.fenced.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.StoreUnavailableException;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.internal.Redaction;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.redis.RedisLeaseStore;
import java.time.Duration;
import picocli.CommandLine.Option;

/** The connection options every command shares, each with an environment variable as fallback. */
final class Connections {
    @Option(names = "--redis-url", paramLabel = "URL", defaultValue = "${env:FENCED_REDIS_URL}",
            description = "Redis, redis://[user:password@]host:port or rediss://... (env FENCED_REDIS_URL)")
    String redisUrl;

    @Option(names = "--db-url", paramLabel = "JDBC_URL", defaultValue = "${env:FENCED_DB_URL}",
            description = "the database, jdbc:postgresql://... or jdbc:mariadb://... (env FENCED_DB_URL)")
    String dbUrl;

    @Option(names = "--gateway-url", paramLabel = "URL", defaultValue = "${env:FENCED_GATEWAY_URL}",
            description = "the payment gateway, http://host:port (env FENCED_GATEWAY_URL)")
    String gatewayUrl;

    static String require(String value, String option, String env) {
        if (value == null || value.isBlank()) {
            throw new UsageException("needs " + option + " or the environment variable " + env);
        }
        return value;
    }

    /** A pooled, migrated database; fails fast with one line when it is unreachable. */
    static HikariDataSource database(String jdbcUrl, int poolSize) {
        if (!jdbcUrl.startsWith("jdbc:postgresql:") && !jdbcUrl.startsWith("jdbc:mariadb:") && !jdbcUrl.startsWith("jdbc:mysql:")) {
            throw new UsageException("database URL must start with jdbc:postgresql: or jdbc:mariadb:, got " + Redaction.redactUri(jdbcUrl));
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(poolSize);
        config.setConnectionTimeout(5_000);
        config.setInitializationFailTimeout(5_000);
        config.setPoolName("fenced");
        HikariDataSource dataSource;
        try {
            dataSource = new HikariDataSource(config);
        } catch (RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            throw new StoreUnavailableException("database at " + Redaction.redactUri(jdbcUrl) + " is unreachable: "
                    + Redaction.redactUri(String.valueOf(root.getMessage())), e);
        }
        try {
            FencedSchema.migrate(dataSource);
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
        return dataSource;
    }

    /** A Redis lease store whose counter is reseeded from the refunds' highest fence. */
    static RedisLeaseStore leases(String redisUrl, HikariDataSource database, String ownerLabel) {
        RedisLeaseStore.Builder builder = RedisLeaseStore.builder(redisUrl)
                .fenceFloor(JdbcFenceFloor.of(database, FencedSchema.refundTable(), resource -> resource.substring("settle:".length())));
        if (ownerLabel != null) {
            builder.ownerLabel(ownerLabel);
        }
        return builder.build();
    }

    static GatewayClient gateway(String url) {
        return GatewayClient.of(url, Duration.ofSeconds(5));
    }
}
