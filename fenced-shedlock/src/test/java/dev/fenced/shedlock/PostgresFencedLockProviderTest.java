package dev.fenced.shedlock;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.LeaseStore;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcLeaseStore;
import dev.fenced.testing.servers.TestDatabases;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The bridge on leases in a real PostgreSQL (FENCED_PG_URL, or an embedded one): a database alone, no Redis. */
class PostgresFencedLockProviderTest extends FencedLockProviderContract {
    private static HikariDataSource pool;
    private static JdbcLeaseStore store;

    @BeforeAll
    static void connect() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestDatabases.postgresUrl());
        config.setMaximumPoolSize(8);
        pool = new HikariDataSource(config);
        FencedSchema.migrate(pool);
        store = JdbcLeaseStore.builder(pool).build();
    }

    @AfterAll
    static void close() {
        pool.close();
    }

    @Override
    protected LeaseStore store() {
        return store;
    }
}
