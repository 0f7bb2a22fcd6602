package dev.fenced.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/** The dialect behind one DataSource, detected on first use and kept: a DataSource reaches one database. Thread-safe. */
final class DetectedDialect {
    private volatile JdbcDialect dialect;

    JdbcDialect of(Connection connection) throws SQLException {
        JdbcDialect known = dialect;
        if (known == null) {
            known = JdbcDialect.detect(connection);
            dialect = known;
        }
        return known;
    }
}
