package dev.fenced.settlement;

import dev.fenced.testing.servers.TestDatabases;

class PostgresSharedConfirmsTest extends SharedConfirmsContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }
}
