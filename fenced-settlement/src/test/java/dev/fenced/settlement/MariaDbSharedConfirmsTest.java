package dev.fenced.settlement;

import dev.fenced.testing.servers.TestDatabases;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

class MariaDbSharedConfirmsTest extends SharedConfirmsContract {
    @Override
    protected String jdbcUrl() {
        TestDatabases.mariadb(); // skips outside CI when no MariaDB is configured, fails in CI
        return TestDatabases.mariadbUrl().orElseThrow();
    }

    @Override
    protected boolean aConfirmWaitsForARowLock(Connection connection) throws SQLException {
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE '%UPDATE refund%'")) {
            return rs.next() && rs.getInt(1) > 0;
        }
    }
}
