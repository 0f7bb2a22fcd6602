package dev.fenced.jdbc;

import dev.fenced.testing.servers.TestDatabases;

class PostgresTokenSourceTest extends JdbcTokenSourceContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }
}
