package dev.fenced.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/** Binds the parameters of {@link Sql#claimAllPrefix} followed by the ids. */
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
            statement.setObject(6 + i, ids.get(i));
        }
    }
}
