package dev.fenced.jdbc;

import dev.fenced.testing.TestDatabases;
import javax.sql.DataSource;

class MariaDbFenceFloorTest extends JdbcFenceFloorContract {
    @Override
    protected DataSource createDataSource() {
        return TestDatabases.mariadb();
    }
}
