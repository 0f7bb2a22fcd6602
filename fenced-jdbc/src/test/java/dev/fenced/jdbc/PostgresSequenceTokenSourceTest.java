package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.testing.servers.TestDatabases;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/** The token source contract for {@link JdbcSequenceTokenSource}. */
class PostgresSequenceTokenSourceTest extends JdbcSequenceTokenSourceContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }

    /** The control: a sequence that caches values per session hands a later holder a lower token, which the fence would refuse. */
    @Test
    void controlACachedSequenceGoesBackBetweenProcesses() throws Exception {
        try (Connection c = DriverManager.getConnection(jdbcUrl()); Statement s = c.createStatement()) {
            s.execute("DROP SEQUENCE IF EXISTS fence_token_seq_cached");
            s.execute("CREATE SEQUENCE fence_token_seq_cached CACHE 20");
        }
        assertThat(outOfOrder(alternating(jdbcUrl(), "fence_token_seq_cached", 40))).isPositive();
    }
}
