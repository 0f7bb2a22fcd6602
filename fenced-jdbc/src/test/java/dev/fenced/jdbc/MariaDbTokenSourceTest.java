package dev.fenced.jdbc;

import dev.fenced.testing.servers.TestDatabases;

class MariaDbTokenSourceTest extends JdbcTokenSourceContract {
    @Override
    protected String jdbcUrl() {
        TestDatabases.mariadb(); // skips outside CI when no MariaDB is configured, fails in CI
        return TestDatabases.mariadbUrl().orElseThrow();
    }
}
