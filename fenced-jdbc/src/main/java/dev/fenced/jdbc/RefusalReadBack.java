package dev.fenced.jdbc;

import dev.fenced.FenceViolation;
import dev.fenced.FencedException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Why fenced writes updated no row: reads the rows back in one query and reports what each holds
 * now, or that it is missing. It explains a refusal; it decides nothing. Thread-safe.
 */
final class RefusalReadBack {
    private final FencedTable table;
    private final String readBackPrefix;

    RefusalReadBack(FencedTable table, Sql sql) {
        this.table = table;
        this.readBackPrefix = sql.readBackPrefix;
    }

    /**
     * Why each of {@code ids} was refused, in their order: a {@link FenceViolation} or a {@link RowNotFoundException}.
     * {@code waitSeconds} bounds the read as {@link java.sql.Statement#setQueryTimeout} does; 0: no bound of its own.
     */
    Map<Object, FencedException> refusals(Connection connection, JdbcDialect dialect, List<Object> ids, long token, int waitSeconds)
            throws SQLException {
        if (ids.isEmpty()) {
            return Map.of();
        }
        Map<String, FenceViolation> found = new HashMap<>();
        // A locking read sees the row as it is now: a plain read at REPEATABLE READ (InnoDB) would
        // report the snapshot, older than the write that refused this one.
        String readBack = readBackPrefix + Sql.placeholders(ids.size()) + ")" + dialect.lockingReadSuffix();
        try (PreparedStatement statement = connection.prepareStatement(readBack)) {
            if (waitSeconds > 0) {
                statement.setQueryTimeout(waitSeconds);
            }
            for (int i = 0; i < ids.size(); i++) {
                BatchParameters.value(statement, i + 1, ids.get(i));
            }
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    Object id = rs.getObject(1);
                    found.put(dialect.idKey(id), new FenceViolation(table.table(), id, token, rs.getLong(3), rs.getString(2)));
                }
            }
        }
        Map<Object, FencedException> refusals = new LinkedHashMap<>();
        for (Object id : ids) {
            FenceViolation violation = found.get(dialect.idKey(id));
            refusals.put(id, violation != null ? violation : new RowNotFoundException(table.table(), id));
        }
        return refusals;
    }
}
