package dev.fenced.jdbc;

import dev.fenced.testing.servers.TestDatabases;

class PostgresFencedTransactionsTest extends FencedTransactionsContract {
    @Override
    protected String jdbcUrl() {
        return TestDatabases.postgresUrl();
    }

    @Override
    protected String ledgerDdl() {
        return "CREATE TABLE IF NOT EXISTS fenced_tx_ledger (id BIGSERIAL PRIMARY KEY, resource VARCHAR(200) NOT NULL,"
                + " token BIGINT NOT NULL, phase VARCHAR(20) NOT NULL, amount NUMERIC(12, 2) NOT NULL)";
    }
}
