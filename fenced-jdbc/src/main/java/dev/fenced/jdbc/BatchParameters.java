package dev.fenced.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/** Binds statement parameters: those of {@link Sql#claimAllPrefix} followed by the ids, and single values. */
final class BatchParameters {
    private BatchParameters() {
    }

    static void bind(PreparedStatement statement, FencedTable table, List<?> ids, long token) throws SQLException {
        statement.setString(1, table.claimedState());
        statement.setLong(2, token);
        statement.setString(3, table.pendingState());
        statement.setString(4, table.claimedState());
        statement.setLong(5, token);
        for (int i = 0; i < ids.size(); i++) {
            value(statement, 6 + i, ids.get(i));
        }
    }

    /**
     * Binds a row id or a column value by its type where it is a common one: given
     * {@code setObject}, a driver looks the value's type up on every call (MariaDB's searches its
     * list of codecs).
     */
    static void value(PreparedStatement statement, int index, Object value) throws SQLException {
        if (value instanceof String text) {
            statement.setString(index, text);
        } else if (value instanceof Long number) {
            statement.setLong(index, number);
        } else if (value instanceof Integer number) {
            statement.setInt(index, number);
        } else {
            statement.setObject(index, value);
        }
    }
}
