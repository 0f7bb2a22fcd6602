package dev.fenced.jdbc;

import dev.fenced.testing.servers.TestDatabases;

class MariaDbFencedTransactionsTest extends FencedTransactionsContract {
    @Override
    protected String jdbcUrl() {
        TestDatabases.mariadb(); // skips outside CI when no MariaDB is configured, fails in CI
        return TestDatabases.mariadbUrl().orElseThrow();
    }

    @Override
    protected String ledgerDdl() {
        return "CREATE TABLE IF NOT EXISTS fenced_tx_ledger (id BIGINT AUTO_INCREMENT PRIMARY KEY, resource VARCHAR(200) NOT NULL,"
                + " token BIGINT NOT NULL, phase VARCHAR(20) NOT NULL, amount DECIMAL(12, 2) NOT NULL) ENGINE = InnoDB";
    }
}
