package dev.fenced.jdbc;

import dev.fenced.testing.servers.TestDatabases;

/** The token source contract for {@link JdbcSequenceTokenSource}. */
class MariaDbSequenceTokenSourceTest extends JdbcSequenceTokenSourceContract {
    @Override
    protected String jdbcUrl() {
        TestDatabases.mariadb(); // skips outside CI when no MariaDB is configured, fails in CI
        return TestDatabases.mariadbUrl().orElseThrow();
    }
}
