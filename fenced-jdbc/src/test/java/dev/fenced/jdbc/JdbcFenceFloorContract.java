package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.FenceFloor;
import dev.fenced.testing.FenceFloorContract;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** {@link JdbcFenceFloor} on a fenced table scoped by merchant: the fence floor contract, and the whole-table floor. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcFenceFloorContract extends FenceFloorContract {
    private final String tableName = "fenced_floor_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private DataSource dataSource;
    private FencedTable table;

    protected abstract DataSource createDataSource();

    @BeforeAll
    void createTable() throws SQLException {
        dataSource = createDataSource();
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + tableName + " (id VARCHAR(64) PRIMARY KEY, merchant VARCHAR(64) NOT NULL,"
                    + " state VARCHAR(16) NOT NULL, fence BIGINT NOT NULL DEFAULT 0)");
        }
        table = FencedTable.builder(tableName).scopeColumn("merchant").build();
    }

    @AfterAll
    void dropTable() throws SQLException {
        if (dataSource == null) {
            return; // the database was not configured and the class was skipped
        }
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE " + tableName);
        }
    }

    @Override
    protected FenceFloor floor() {
        return JdbcFenceFloor.of(dataSource, table, resource -> resource.substring("settle:".length()));
    }

    @Override
    protected void store(String resource, long fence) {
        try (Connection c = dataSource.getConnection(); PreparedStatement s = c.prepareStatement(
                "INSERT INTO " + tableName + " (id, merchant, state, fence) VALUES (?, ?, 'sent', ?)")) {
            s.setString(1, UUID.randomUUID().toString());
            s.setString(2, resource.substring("settle:".length()));
            s.setLong(3, fence);
            s.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aWholeTableFloorIsTheHighestFenceOfEveryRow() {
        store(freshResource(), 7);
        store(freshResource(), 1_000_000_007);
        assertThat(JdbcFenceFloor.wholeTable(dataSource, table).highestStoredFence("anything")).isEqualTo(1_000_000_007);
    }
}
