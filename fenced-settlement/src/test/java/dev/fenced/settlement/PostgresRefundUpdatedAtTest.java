package dev.fenced.settlement;

import dev.fenced.testing.servers.TestDatabases;

class PostgresRefundUpdatedAtTest extends RefundUpdatedAtContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }

    @Override
    protected boolean movedBeforeV6() {
        return false;
    }
}
