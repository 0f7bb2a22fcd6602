package dev.fenced.settlement;

import dev.fenced.testing.servers.TestDatabases;

class PostgresWebhookTest extends WebhookContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }
}
