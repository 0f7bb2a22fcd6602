package dev.fenced.settlement;

import dev.fenced.testing.servers.TestDatabases;

class MariaDbWebhookTest extends WebhookContract {
    @Override
    protected String jdbcUrl() {
        TestDatabases.mariadb(); // skips outside CI when no MariaDB is configured, fails in CI
        return TestDatabases.mariadbUrl().orElseThrow();
    }
}
