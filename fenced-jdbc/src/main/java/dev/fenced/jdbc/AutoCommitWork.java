package dev.fenced.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * A write on a connection of its own, committed before the connection goes back to the pool
 * whatever auto-commit the pool hands out (a pool set to {@code autoCommit=false} would roll it
 * back), with auto-commit put back as it was found. For {@link FencedRows}'s {@link DataSource}
 * methods; it does not join a transaction the caller has open on another connection.
 */
final class AutoCommitWork {
    private AutoCommitWork() {
    }

    /** The work on one connection; a refusal or error it throws is the caller's answer. */
    interface ConnectionWork<T> {
        T run(Connection connection);
    }

    /** Runs {@code work} in auto-commit; a failure to get or set up the connection names {@code tableName}. */
    static <T> T run(DataSource dataSource, String tableName, ConnectionWork<T> work) {
        try (Connection connection = dataSource.getConnection()) {
            boolean found = connection.getAutoCommit();
            if (!found) {
                connection.setAutoCommit(true);
            }
            try {
                return work.run(connection);
            } finally {
                if (!found) {
                    restoreManualCommit(connection);
                }
            }
        } catch (SQLException e) {
            throw SqlErrors.translate(null, "connection to the database for " + tableName, e);
        }
    }

    /** A connection that cannot take it back is broken, and its pool discards it; the write was committed already. */
    private static void restoreManualCommit(Connection connection) {
        try {
            connection.setAutoCommit(false);
        } catch (SQLException brokenConnection) {
            // what the write did, or why it was refused, is the answer; not this
        }
    }
}
