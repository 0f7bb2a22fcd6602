package dev.fenced.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The finish UPDATEs of one table (claimed to a target state, only while {@code fence = token}):
 * one per set of extra columns, validated once and cached. Thread-safe.
 */
final class FinishStatements {
    private static final int MAX_CACHED_STATEMENTS = 64;

    /** The finish UPDATE for one set of extra columns, which it sets in this order. */
    record Finish(String sql, List<String> columns) {
    }

    private final FencedTable table;
    private final String template;
    private final Map<Set<String>, Finish> cache = new ConcurrentHashMap<>();

    FinishStatements(FencedTable table, Sql sql) {
        this.table = table;
        this.template = sql.confirm;
    }

    /**
     * The statement moving a claimed row to {@code toState} and setting {@code columnSet}.
     *
     * @throws IllegalArgumentException for a bad state or column name, the claimed state itself,
     *         or a column the fence manages
     */
    Finish statement(String toState, Set<String> columnSet) {
        SqlIdentifiers.state("target state", toState);
        // Compared as a case-insensitive collation (MariaDB's default) compares them: 'SENDING' is 'sending' there.
        if (toState.equalsIgnoreCase(table.claimedState())) {
            throw new IllegalArgumentException("finish must leave the claimed state '" + table.claimedState() + "', got '" + toState + "'");
        }
        Finish cached = cache.get(columnSet);
        if (cached != null) {
            return cached;
        }
        List<String> columns = List.copyOf(columnSet);
        StringBuilder extra = new StringBuilder();
        for (String column : columns) {
            SqlIdentifiers.column("column", column);
            // SQL folds unquoted identifiers: FENCE is the fence column.
            if (column.equalsIgnoreCase(table.idColumn()) || column.equalsIgnoreCase(table.stateColumn())
                    || column.equalsIgnoreCase(table.fenceColumn())) {
                throw new IllegalArgumentException("column '" + column + "' is managed by the fence and cannot be set directly");
            }
            extra.append(", ").append(column).append(" = ?");
        }
        Finish finish = new Finish(String.format(template, extra), columns);
        if (cache.size() < MAX_CACHED_STATEMENTS) {
            cache.put(Set.copyOf(columnSet), finish);
        }
        return finish;
    }

    void bind(PreparedStatement statement, Finish finish, String toState, Object id, long token,
              Map<String, ?> alsoSet) throws SQLException {
        int index = 1;
        statement.setString(index++, toState);
        for (String column : finish.columns()) {
            BatchParameters.value(statement, index++, alsoSet.get(column));
        }
        BatchParameters.value(statement, index++, id);
        statement.setString(index++, table.claimedState());
        statement.setLong(index, token);
    }
}
