package dev.fenced.jdbc;

import dev.fenced.testing.servers.TestDatabases;
import javax.sql.DataSource;

class MariaDbFenceFloorTest extends JdbcFenceFloorContract {
    @Override
    protected DataSource createDataSource() {
        return TestDatabases.mariadb();
    }
}
