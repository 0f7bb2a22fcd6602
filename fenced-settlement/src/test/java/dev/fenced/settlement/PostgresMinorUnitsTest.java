package dev.fenced.settlement;

import dev.fenced.testing.servers.TestDatabases;

class PostgresMinorUnitsTest extends MinorUnitsContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }
}
