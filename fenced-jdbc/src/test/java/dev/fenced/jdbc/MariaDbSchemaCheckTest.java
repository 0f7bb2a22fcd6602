package dev.fenced.jdbc;

import dev.fenced.testing.servers.TestDatabases;

class MariaDbSchemaCheckTest extends SchemaCheckContract {
    @Override
    protected String jdbcUrl() {
        TestDatabases.mariadb(); // skips outside CI when no MariaDB is configured, fails in CI
        return TestDatabases.mariadbUrl().orElseThrow();
    }
}
