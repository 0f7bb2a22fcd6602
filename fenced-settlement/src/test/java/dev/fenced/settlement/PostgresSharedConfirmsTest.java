package dev.fenced.settlement;

import dev.fenced.testing.servers.TestDatabases;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

class PostgresSharedConfirmsTest extends SharedConfirmsContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }

    @Override
    protected boolean aConfirmWaitsForARowLock(Connection connection) throws SQLException {
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE refund%'")) {
            return rs.next() && rs.getInt(1) > 0;
        }
    }
}
