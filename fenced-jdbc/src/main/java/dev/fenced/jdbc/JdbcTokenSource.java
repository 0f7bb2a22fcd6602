package dev.fenced.jdbc;

import dev.fenced.LeaseArguments;
import dev.fenced.TokenSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Tokens from a counter table in the database, one row per resource: durable and unique even when
 * Redis loses every key. Plug it into a lease store (e.g. {@code RedisLeaseStore.builder(..)
 * .tokens(TokenPolicy.durable(..))}) so that Redis keeps only the lease.
 *
 * <p>Each token is one committed statement of its own (auto-commit), so it is never rolled back
 * and never handed out twice. Thread-safe.
 */
public final class JdbcTokenSource implements TokenSource {
    private final DataSource dataSource;
    private final DetectedDialect detected = new DetectedDialect();
    private final String counterTable;

    private JdbcTokenSource(DataSource dataSource, String counterTable) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.counterTable = SqlIdentifiers.table("counter table", counterTable);
    }

    /** Tokens from {@code fence_counter}, the table {@link FencedSchema} creates. */
    public static JdbcTokenSource of(DataSource dataSource) {
        return new JdbcTokenSource(dataSource, FencedSchema.COUNTER_TABLE);
    }

    /** Tokens from a counter table of your own with columns {@code resource} (primary key) and {@code value}. */
    public static JdbcTokenSource of(DataSource dataSource, String counterTable) {
        return new JdbcTokenSource(dataSource, counterTable);
    }

    @Override
    public long nextToken(String resource) {
        LeaseArguments.requireValidResource(resource);
        JdbcDialect dialect = null;
        try (Connection connection = dataSource.getConnection()) {
            boolean found = connection.getAutoCommit();
            if (!found) {
                connection.setAutoCommit(true); // the counter's raise commits before the token is handed out
            }
            dialect = detected.of(connection);
            try {
                return dialect.nextToken(connection, counterTable, resource);
            } finally {
                if (!found) {
                    connection.setAutoCommit(false);
                }
            }
        } catch (SQLException e) {
            throw SqlErrors.translate(dialect, "issuing a token for " + resource, e);
        }
    }
}
