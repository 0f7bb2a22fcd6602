package dev.fenced.bench;

import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.FencedTable;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Claim + confirm of one row, fenced against the same two UPDATEs without the fence predicate, on
 * the same table and connection, auto-commit: one commit per UPDATE, as a worker with one refund in
 * flight pays them. Both sides prepare their statements per call, as JDBC code that takes a
 * caller's connection does.
 *
 * <p>A bench command, not JMH: the two sides run interleaved, in blocks of {@value #BLOCK} pairs in
 * the order fenced, unfenced, unfenced, fenced, so that both meet the same noise. Commit latency on
 * these machines swings by 2x within a minute; separate runs per side cannot resolve a 5 % gap.
 */
final class PairedWrites {
    private static final int BLOCK = 50;
    private static final String TABLE = "bench_fenced_rows";
    private static final String PLAIN_CLAIM = "UPDATE " + TABLE + " SET state = ?, fence = ? WHERE id = ? AND state IN (?, ?)";
    private static final String PLAIN_CONFIRM = "UPDATE " + TABLE + " SET state = ?, gateway_reference = ? WHERE id = ? AND state = ?";

    private final Connection connection;
    private final FencedRows rows = FencedRows.of(FencedTable.builder(TABLE).states("pending", "sending", "sent").build());
    private int next;
    private long token;

    private PairedWrites(Connection connection) {
        this.connection = connection;
    }

    static String run(Map<String, String> urlByDatabase, boolean quick) throws SQLException {
        int quads = quick ? 15 : 75;
        StringBuilder out = new StringBuilder("## Claim + confirm, fenced against the same UPDATEs without the fence predicate\n\n")
                .append("| database | fenced pairs/s | unfenced pairs/s | time fenced vs unfenced | median round | middle half of the rounds |\n")
                .append("|---|---:|---:|---:|---:|---:|\n");
        for (Map.Entry<String, String> database : urlByDatabase.entrySet()) {
            try (Connection connection = DriverManager.getConnection(database.getValue())) {
                out.append(new PairedWrites(connection).measure(database.getKey(), quads));
            }
        }
        return out.append("\nInterleaved in blocks of ").append(BLOCK).append(" pairs (fenced, unfenced, unfenced, fenced per round, ")
                .append(quads).append(" rounds after ").append(quads / 5).append(" rounds of warm-up); auto-commit, one commit per UPDATE.\n\n")
                .toString();
    }

    private String measure(String database, int quads) throws SQLException {
        int warmUp = quads / 5;
        seed((warmUp + quads) * 4 * BLOCK);
        for (int i = 0; i < warmUp; i++) {
            round();
        }
        long fencedNanos = 0;
        long plainNanos = 0;
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < quads; i++) {
            long[] round = round();
            fencedNanos += round[0];
            plainNanos += round[1];
            ratios.add((double) round[0] / round[1]);
        }
        Collections.sort(ratios);
        double pairs = quads * 2.0 * BLOCK;
        try (Statement s = connection.createStatement()) {
            s.execute("DROP TABLE " + TABLE);
        }
        return String.format("| %s | %,.0f | %,.0f | %.3fx | %.3fx | %.2fx to %.2fx |%n", database, pairs / (fencedNanos / 1e9),
                pairs / (plainNanos / 1e9), (double) fencedNanos / plainNanos, ratios.get(quads / 2), ratios.get(quads / 4),
                ratios.get(quads * 3 / 4));
    }

    /** One round, fenced, unfenced, unfenced, fenced; returns the nanoseconds of each side. */
    private long[] round() throws SQLException {
        long fenced = fencedBlock();
        long plain = plainBlock();
        plain += plainBlock();
        fenced += fencedBlock();
        return new long[] {fenced, plain};
    }

    private long fencedBlock() {
        long start = System.nanoTime();
        for (int i = 0; i < BLOCK; i++) {
            String id = Integer.toString(next++);
            long t = ++token;
            rows.claim(connection, id, t);
            rows.confirm(connection, id, t, Map.of("gateway_reference", "gw"));
        }
        return System.nanoTime() - start;
    }

    private long plainBlock() throws SQLException {
        long start = System.nanoTime();
        for (int i = 0; i < BLOCK; i++) {
            String id = Integer.toString(next++);
            try (PreparedStatement claim = connection.prepareStatement(PLAIN_CLAIM)) {
                claim.setString(1, "sending");
                claim.setLong(2, ++token);
                claim.setString(3, id);
                claim.setString(4, "pending");
                claim.setString(5, "sending");
                claim.executeUpdate();
            }
            try (PreparedStatement confirm = connection.prepareStatement(PLAIN_CONFIRM)) {
                confirm.setString(1, "sent");
                confirm.setString(2, "gw");
                confirm.setString(3, id);
                confirm.setString(4, "sending");
                confirm.executeUpdate();
            }
        }
        return System.nanoTime() - start;
    }

    private void seed(int count) throws SQLException {
        try (Statement s = connection.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + TABLE);
            s.execute("CREATE TABLE " + TABLE + " (id VARCHAR(32) PRIMARY KEY, state VARCHAR(16) NOT NULL,"
                    + " fence BIGINT NOT NULL DEFAULT 0, gateway_reference VARCHAR(32))");
        }
        connection.setAutoCommit(false);
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + TABLE + " (id, state) VALUES (?, 'pending')")) {
            for (int i = 0; i < count; i++) {
                insert.setString(1, Integer.toString(i));
                insert.addBatch();
                if (i % 5_000 == 4_999) {
                    insert.executeBatch();
                }
            }
            insert.executeBatch();
        }
        connection.commit();
        connection.setAutoCommit(true);
        try (Statement s = connection.createStatement()) {
            s.execute(connection.getMetaData().getDatabaseProductName().equalsIgnoreCase("PostgreSQL")
                    ? "ANALYZE " + TABLE : "ANALYZE TABLE " + TABLE);
        }
    }
}
