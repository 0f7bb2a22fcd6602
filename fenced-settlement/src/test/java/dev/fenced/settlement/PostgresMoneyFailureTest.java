package dev.fenced.settlement;

import dev.fenced.testing.servers.TestDatabases;

class PostgresMoneyFailureTest extends MoneyFailureContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }
}
