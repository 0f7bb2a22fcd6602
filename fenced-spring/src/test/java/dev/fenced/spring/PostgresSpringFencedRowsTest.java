package dev.fenced.spring;

import dev.fenced.testing.servers.TestDatabases;

class PostgresSpringFencedRowsTest extends SpringFencedRowsContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }

    @Override
    protected String shortLockWait() {
        return "SET lock_timeout = '1s'";
    }
}
