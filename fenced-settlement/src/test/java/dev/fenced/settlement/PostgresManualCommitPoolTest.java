package dev.fenced.settlement;

import dev.fenced.testing.servers.TestDatabases;

class PostgresManualCommitPoolTest extends ManualCommitPoolContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }
}
