package dev.fenced.settlement;

import dev.fenced.testing.TestDatabases;

class PostgresMinorUnitsTest extends MinorUnitsContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }
}
