package dev.fenced.jdbc;

import dev.fenced.FenceFloor;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * The highest fence stored for a resource: {@code SELECT MAX(fence) FROM table WHERE scope = ?},
 * for reseeding a Redis counter that was lost. The resource is mapped to the scope value by a
 * function, e.g. {@code settle:m_4471} to {@code m_4471}.
 *
 * <p>It sees only this table: fences stored elsewhere need a floor of their own (take the
 * maximum). It cannot see a token that was issued but never written to a row, so after a reseed
 * such a token can be issued again; where that matters, use {@link JdbcTokenSource}.
 */
public final class JdbcFenceFloor implements FenceFloor {
    private final DataSource dataSource;
    private final DetectedDialect detected = new DetectedDialect();
    private final String sql;
    private final Function<String, Object> scopeOfResource;

    private JdbcFenceFloor(DataSource dataSource, FencedTable table, Function<String, Object> scopeOfResource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.scopeOfResource = scopeOfResource;
        String scope = scopeOfResource == null ? null : table.scopeColumn().orElseThrow(
                () -> new IllegalArgumentException(table.table() + " has no scope column to map resources to"));
        this.sql = "SELECT COALESCE(MAX(" + table.fenceColumn() + "), 0) FROM " + table.table()
                + (scope == null ? "" : " WHERE " + scope + " = ?");
    }

    /** The highest fence in the rows whose scope column equals {@code scopeOfResource(resource)}. */
    public static JdbcFenceFloor of(DataSource dataSource, FencedTable table, Function<String, Object> scopeOfResource) {
        return new JdbcFenceFloor(dataSource, table, Objects.requireNonNull(scopeOfResource, "scopeOfResource"));
    }

    /** The highest fence in the whole table, for a table that one resource protects. */
    public static JdbcFenceFloor wholeTable(DataSource dataSource, FencedTable table) {
        return new JdbcFenceFloor(dataSource, table, null);
    }

    @Override
    public long highestStoredFence(String resource) {
        JdbcDialect dialect = null;
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement(sql)) {
            dialect = detected.of(connection);
            if (scopeOfResource != null) {
                statement.setObject(1, scopeOfResource.apply(resource));
            }
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw SqlErrors.translate(dialect, "reading the fence floor for " + resource, e);
        }
    }
}
