package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.TokenSource;
import dev.fenced.testing.servers.OneConnectionPool;
import dev.fenced.testing.TokenSourceContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** {@link JdbcTokenSource} on one database: the token source contract, and the counter row's own rules. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcTokenSourceContract extends TokenSourceContract {
    private HikariDataSource pool;
    private JdbcTokenSource source;

    /** A JDBC URL of the database under test. */
    protected abstract String jdbcUrl();

    @BeforeAll
    void open() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setMaximumPoolSize(8);
        pool = new HikariDataSource(config);
        FencedSchema.migrate(pool);
        source = JdbcTokenSource.of(pool);
    }

    @AfterAll
    void close() {
        if (pool != null) { // null when the database was not configured and the class was skipped
            pool.close();
        }
    }

    @Override
    protected TokenSource source() {
        return source;
    }

    @Override
    protected TokenSource reopened() {
        return JdbcTokenSource.of(pool);
    }

    @Test
    void aCounterStartsAtOneAndEachResourceHasItsOwn() {
        String resource = freshResource();
        assertThat(source.nextToken(resource)).isEqualTo(1);
        assertThat(source.nextToken(resource)).isEqualTo(2);
        assertThat(source.nextToken(freshResource())).as("counters are per resource").isEqualTo(1);
    }

    /** On a connection in manual commit the counter's raise is committed, and the connection goes back in manual commit. */
    @Test
    void aTokenIsCommittedAndTheConnectionGoesBackAsItCame() throws java.sql.SQLException {
        String resource = freshResource();
        try (java.sql.Connection pooled = pool.getConnection()) {
            pooled.setAutoCommit(false);
            JdbcTokenSource onIt = JdbcTokenSource.of(OneConnectionPool.of(pooled));
            assertThat(onIt.nextToken(resource)).isEqualTo(1);
            assertThat(pooled.getAutoCommit()).isFalse();
            pooled.rollback();
        }
        assertThat(source.nextToken(resource)).as("the first token was committed").isEqualTo(2);
    }
}
