package dev.fenced.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.FencedTransactions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A fenced transaction ({@link FencedTransactions#enter} first, then the statements, then commit;
 * or the statements, then {@link FencedTransactions#commit}) against the same transaction without
 * the guard, on the same table: one INSERT; ten INSERTs; and one INSERT from 8 connections at once
 * under one token. On PostgreSQL also the floor of a check made with the commit: {@code SELECT 1}
 * in its place. The token's first transaction (the raise) is made before the measurement: this is
 * the steady state of a holder.
 *
 * <p>Interleaved in blocks, in the order fenced, plain, plain, fenced per round, as
 * {@link PairedWrites} does, so that both sides meet the same noise of commit latency.
 */
final class PairedTransactions {
    private static final String TABLE = "bench_fenced_tx";
    private static final String INSERT = "INSERT INTO " + TABLE + " (resource, token, amount) VALUES (?, ?, 70.25)";
    private static final long TOKEN = 1;

    /** How the "fenced" side of a shape ends its transaction. */
    private enum Guard {
        /** {@code FencedTransactions.enter} before the statements, then the commit. */
        ENTER,
        /** {@code FencedTransactions.commit}: on PostgreSQL the check travels with the COMMIT. */
        AT_COMMIT,
        /**
         * No guard: {@code SELECT 1} sent with the COMMIT in one round trip, as the check is. The floor of any
         * check made with the commit, to read the guard's ratio against (PostgreSQL only).
         */
        FLOOR
    }

    /** A transaction's shape, and how its fenced side checks the guard. */
    private record Shape(String name, int statements, int threads, int block, Guard guard) {
    }

    private static final String FLOOR = "SELECT 1; COMMIT";

    private static final List<Shape> SHAPES = List.of(new Shape("1 INSERT + commit", 1, 1, 40, Guard.ENTER),
            new Shape("10 INSERTs + commit", 10, 1, 20, Guard.ENTER), new Shape("1 INSERT + commit, 8 connections, one token", 1, 8, 20, Guard.ENTER),
            new Shape("1 INSERT + commit, checked with the commit", 1, 1, 40, Guard.AT_COMMIT),
            new Shape("10 INSERTs + commit, checked with the commit", 10, 1, 20, Guard.AT_COMMIT),
            new Shape("1 INSERT + commit, 8 connections, checked with the commit", 1, 8, 20, Guard.AT_COMMIT),
            new Shape("1 INSERT + commit, `SELECT 1` with the commit (the floor, no guard)", 1, 1, 40, Guard.FLOOR),
            new Shape("1 INSERT + commit, 8 connections, `SELECT 1` with the commit (the floor, no guard)", 1, 8, 20, Guard.FLOOR));

    private final String url;
    private final FencedTransactions fences = FencedTransactions.create();
    private final String resource = "bench:" + UUID.randomUUID();
    private boolean postgres;

    private PairedTransactions(String url) {
        this.url = url;
    }

    static String run(Map<String, String> urlByDatabase, boolean quick) throws Exception {
        int rounds = quick ? 8 : 40;
        StringBuilder out = new StringBuilder("## Fenced transactions against the same transactions without the guard\n\n")
                .append("| database | transaction | fenced tx/s | plain tx/s | time fenced vs plain | median round | middle half of the rounds |\n")
                .append("|---|---|---:|---:|---:|---:|---:|\n");
        for (Map.Entry<String, String> database : urlByDatabase.entrySet()) {
            PairedTransactions bench = new PairedTransactions(database.getValue());
            bench.prepare();
            for (Shape shape : SHAPES) {
                if (shape.guard() != Guard.FLOOR || bench.postgres) {
                    out.append(bench.measure(database.getKey(), shape, rounds));
                }
            }
            bench.drop();
        }
        return out.append("\nInterleaved in blocks (fenced, plain, plain, fenced per round, ").append(rounds).append(" rounds after ")
                .append(rounds / 4).append(" of warm-up); a block is 40, 20 and 20 transactions per connection. The fenced side calls ")
                .append("`FencedTransactions.enter` (one locking read of the guard row) before its statements, or, \"checked with the commit\", ")
                .append("`FencedTransactions.commit` (on PostgreSQL the check travels with the COMMIT; on MariaDB it is enter, then commit). ")
                .append("\"The floor\" is no guard: `SELECT 1` sent with the COMMIT in one round trip, as the check is, on PostgreSQL: ")
                .append("what any check made with the commit costs at least.\n\n")
                .toString();
    }

    private void prepare() throws SQLException {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + TABLE);
            postgres = c.getMetaData().getDatabaseProductName().equalsIgnoreCase("PostgreSQL");
            s.execute("CREATE TABLE " + TABLE + " (id " + (postgres ? "BIGSERIAL" : "BIGINT AUTO_INCREMENT") + " PRIMARY KEY,"
                    + " resource VARCHAR(200) NOT NULL, token BIGINT NOT NULL, amount DECIMAL(12, 2) NOT NULL)");
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(2); // Flyway holds one connection while it migrates with another
        try (HikariDataSource db = new HikariDataSource(config)) {
            FencedSchema.migrate(db);
            fences.inTransaction(db, resource, TOKEN, c -> null); // the raise: not part of what is measured
        }
    }

    private void drop() throws SQLException {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("DROP TABLE " + TABLE);
        }
    }

    private String measure(String database, Shape shape, int rounds) throws Exception {
        List<Connection> connections = new ArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(shape.threads());
        try {
            for (int i = 0; i < shape.threads(); i++) {
                Connection c = DriverManager.getConnection(url);
                c.setAutoCommit(false);
                connections.add(c);
            }
            for (int i = 0; i < rounds / 4; i++) {
                block(threads, connections, shape, true);
                block(threads, connections, shape, false);
            }
            long fencedNanos = 0;
            long plainNanos = 0;
            List<Double> ratios = new ArrayList<>();
            for (int i = 0; i < rounds; i++) {
                long fenced = block(threads, connections, shape, true);
                long plain = block(threads, connections, shape, false);
                plain += block(threads, connections, shape, false);
                fenced += block(threads, connections, shape, true);
                fencedNanos += fenced;
                plainNanos += plain;
                ratios.add((double) fenced / plain);
            }
            Collections.sort(ratios);
            double transactions = rounds * 2.0 * shape.block() * shape.threads();
            return String.format("| %s | %s | %,.0f | %,.0f | %.3fx | %.3fx | %.2fx to %.2fx |%n", database, shape.name(),
                    transactions / (fencedNanos / 1e9), transactions / (plainNanos / 1e9), (double) fencedNanos / plainNanos,
                    ratios.get(rounds / 2), ratios.get(rounds / 4), ratios.get(rounds * 3 / 4));
        } finally {
            threads.shutdown();
            for (Connection c : connections) {
                c.close();
            }
        }
    }

    /** One block on every connection at once; the wall time until the last has committed. */
    private long block(ExecutorService threads, List<Connection> connections, Shape shape, boolean fenced) throws Exception {
        long start = System.nanoTime();
        List<Future<?>> running = new ArrayList<>();
        for (Connection c : connections) {
            running.add(threads.submit(() -> {
                for (int i = 0; i < shape.block(); i++) {
                    transaction(c, shape.statements(), fenced ? shape.guard() : null);
                }
                return null;
            }));
        }
        for (Future<?> f : running) {
            f.get();
        }
        return System.nanoTime() - start;
    }

    /** One transaction; {@code guard} null for the plain side. */
    private void transaction(Connection c, int statements, Guard guard) throws SQLException {
        if (guard == Guard.ENTER) {
            fences.enter(c, resource, TOKEN);
        }
        try (PreparedStatement insert = c.prepareStatement(INSERT)) {
            for (int i = 0; i < statements; i++) {
                insert.setString(1, resource);
                insert.setLong(2, TOKEN);
                insert.executeUpdate();
            }
        }
        if (guard == Guard.AT_COMMIT) {
            fences.commit(c, resource, TOKEN);
        } else if (guard == Guard.FLOOR) {
            try (PreparedStatement floor = c.prepareStatement(FLOOR)) {
                floor.execute();
            }
        } else {
            c.commit();
        }
    }
}
