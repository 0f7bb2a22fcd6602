package dev.fenced.spring;

import dev.fenced.testing.servers.TestDatabases;

class MariaDbSpringFencedRowsTest extends SpringFencedRowsContract {
    @Override
    protected String jdbcUrl() {
        TestDatabases.mariadb(); // skips outside CI when no MariaDB is configured, fails in CI
        return TestDatabases.mariadbUrl().orElseThrow();
    }

    @Override
    protected String shortLockWait() {
        return "SET SESSION innodb_lock_wait_timeout = 1";
    }
}
