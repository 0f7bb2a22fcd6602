package dev.fenced.redis;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole lease contract on a store whose tokens are in epochs drawn from PostgreSQL's
 * {@code fence_epoch_seq}, through a pool as in production: the contract's resources are all new,
 * so each first acquisition draws an epoch.
 */
class RedisLeaseStoreWithEpochsTest extends RedisStoreContract {
    private static HikariDataSource db;
    private static RedisLeaseStore store;

    @BeforeAll
    static void start() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestDatabases.postgresUrl());
        config.setMaximumPoolSize(4);
        db = new HikariDataSource(config);
        FencedSchema.migrate(db);
        store = RedisLeaseStore.builder(TestRedis.uri()).commandTimeout(Duration.ofSeconds(2))
                .tokens(TokenPolicy.epochs(JdbcSequenceTokenSource.epochs(db))).build();
    }

    @AfterAll
    static void stop() {
        if (store != null) {
            store.close();
        }
        if (db != null) {
            db.close();
        }
    }

    @Override
    protected RedisLeaseStore redisStore() {
        return store;
    }
}
