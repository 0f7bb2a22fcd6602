package dev.fenced.settlement;

import dev.fenced.testing.TestDatabases;

class PostgresMoneyFailureTest extends MoneyFailureContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }
}
