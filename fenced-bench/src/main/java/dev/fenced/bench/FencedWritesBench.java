package dev.fenced.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.FencedTable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Claim + confirm of one row, fenced against the same two UPDATEs without the fence predicate, on
 * the same table and connection, auto-commit. Both sides prepare their statements per call, as
 * JDBC code that takes a caller's connection does. Every invocation takes a fresh pending row,
 * seeded before each iteration outside the measurement.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Benchmark)
public class FencedWritesBench {
    private static final int ROWS_PER_ITERATION = 60_000;
    private static final String TABLE = "bench_fenced_rows";

    @Param({"postgresql", "mariadb"})
    public String database;

    private HikariDataSource dataSource;
    private Connection connection;
    private FencedRows rows;
    private static final String PLAIN_CLAIM = "UPDATE " + TABLE + " SET state = ?, fence = ? WHERE id = ? AND state IN (?, ?)";
    private static final String PLAIN_CONFIRM = "UPDATE " + TABLE + " SET state = ?, gateway_reference = ? WHERE id = ? AND state = ?";
    private int iteration;
    private int next;
    private long token;

    @Setup(Level.Trial)
    public void connect() throws SQLException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(BenchServers.database(database));
        config.setMaximumPoolSize(2);
        dataSource = new HikariDataSource(config);
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + TABLE);
            s.execute("CREATE TABLE " + TABLE + " (id VARCHAR(32) PRIMARY KEY, state VARCHAR(16) NOT NULL,"
                    + " fence BIGINT NOT NULL DEFAULT 0, gateway_reference VARCHAR(32))");
        }
        connection = dataSource.getConnection();
        rows = FencedRows.of(FencedTable.builder(TABLE).build());
    }

    @Setup(Level.Iteration)
    public void seed() throws SQLException {
        iteration++;
        next = 0;
        try (Connection c = dataSource.getConnection()) {
            try (Statement s = c.createStatement()) {
                s.execute("DELETE FROM " + TABLE);
            }
            c.setAutoCommit(false);
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + TABLE + " (id, state) VALUES (?, 'pending')")) {
                for (int i = 0; i < ROWS_PER_ITERATION; i++) {
                    insert.setString(1, iteration + "_" + i);
                    insert.addBatch();
                    if (i % 5_000 == 4_999) {
                        insert.executeBatch();
                    }
                }
                insert.executeBatch();
            }
            c.commit();
        }
    }

    private String nextRow() {
        if (next >= ROWS_PER_ITERATION) {
            throw new IllegalStateException("more than " + ROWS_PER_ITERATION + " operations in one iteration: raise ROWS_PER_ITERATION");
        }
        return iteration + "_" + next++;
    }

    @Benchmark
    public void fencedClaimConfirm() {
        String id = nextRow();
        long t = ++token;
        rows.claim(connection, id, t);
        rows.confirm(connection, id, t, Map.of("gateway_reference", "gw"));
    }

    @Benchmark
    public int unfencedClaimConfirm() throws SQLException {
        String id = nextRow();
        int claimed;
        try (PreparedStatement claim = connection.prepareStatement(PLAIN_CLAIM)) {
            claim.setString(1, "sending");
            claim.setLong(2, ++token);
            claim.setString(3, id);
            claim.setString(4, "pending");
            claim.setString(5, "sending");
            claimed = claim.executeUpdate();
        }
        try (PreparedStatement confirm = connection.prepareStatement(PLAIN_CONFIRM)) {
            confirm.setString(1, "sent");
            confirm.setString(2, "gw");
            confirm.setString(3, id);
            confirm.setString(4, "sending");
            return claimed + confirm.executeUpdate();
        }
    }

    @TearDown(Level.Trial)
    public void close() throws SQLException {
        connection.close();
        dataSource.close();
    }
}
