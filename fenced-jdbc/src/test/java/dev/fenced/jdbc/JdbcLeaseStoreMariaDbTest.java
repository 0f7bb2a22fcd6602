package dev.fenced.jdbc;

import dev.fenced.testing.servers.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/** {@link JdbcLeaseStore} on MariaDB: the lease store contract and the database's own cases. */
class JdbcLeaseStoreMariaDbTest extends JdbcLeaseStoreContract {
    @Override
    protected String jdbcUrl() {
        TestDatabases.mariadb(); // skips outside CI when no MariaDB is configured, fails in CI
        return TestDatabases.mariadbUrl().orElseThrow();
    }

    @Override
    protected long sessionId(Connection connection) throws SQLException {
        try (Statement s = connection.createStatement(); ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Override
    protected void terminate(Connection admin, long id) throws SQLException {
        try (Statement s = admin.createStatement()) {
            s.execute("KILL CONNECTION " + id);
        }
    }

    @Override
    protected boolean waitsForALock(Connection admin, long id) throws SQLException {
        try (PreparedStatement s = admin.prepareStatement(
                "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'")) {
            s.setLong(1, id);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1) == 1;
            }
        }
    }

    @Override
    protected String expireSql() {
        return "UPDATE fence_lease SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE resource = ?";
    }

    @Override
    protected String nextTokenExpression() {
        return "NEXTVAL(fence_token_seq)";
    }

    @Override
    protected String sessionZoneSql(String zone) {
        return "SET time_zone = '" + zone + "'";
    }

    @Override
    protected List<String> localTimeControl(String table) {
        return List.of("CREATE TABLE IF NOT EXISTS " + table + " (resource VARCHAR(200) PRIMARY KEY, expires_at DATETIME(3) NOT NULL)",
                "REPLACE INTO " + table + " VALUES (?, NOW(3) + INTERVAL 10 SECOND)",
                "SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), expires_at) FROM " + table + " WHERE resource = ?");
    }

    @Override
    protected String unreachableUrl(String password) {
        return "jdbc:mariadb://127.0.0.1:1/test?user=fenced&password=" + password + "&connectTimeout=2000";
    }
}
