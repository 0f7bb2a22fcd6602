package dev.fenced.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * PostgreSQL's own account of the statements it ran in one database, read before and after a run from
 * {@code pg_stat_statements}: calls, rows and WAL by statement. What the client sends is counted by
 * {@code WorkCountTest}; this is what the server says it did. Only when the server preloads
 * {@code pg_stat_statements}; the bench's own queries of {@code pg_stat_*} views are left out.
 *
 * <p>Not {@code pg_stat_database} or {@code pg_stat_wal}: a backend publishes those counts when it
 * can take their locks without waiting, else up to 10 s later (PostgreSQL 15's
 * {@code PGSTAT_IDLE_INTERVAL}), so over a 20 s run they took in a good part of the seeding before it
 * (tried: 0.75 rows inserted per refund, where the run inserts none). {@code pg_stat_statements}
 * counts each statement as it ends.
 */
record PgCounters(Map<String, Work> byStatement, long deallocations) {
    /** What one statement cost, added over its calls. */
    record Work(long calls, long rows, long walRecords, long walBytes) {
        Work minus(Work before) {
            return new Work(calls - before.calls, rows - before.rows, walRecords - before.walRecords, walBytes - before.walBytes);
        }

        Work plus(Work other) {
            return new Work(calls + other.calls, rows + other.rows, walRecords + other.walRecords, walBytes + other.walBytes);
        }
    }

    /** The counters of the database {@code db} connects to; empty when the server does not preload {@code pg_stat_statements}. */
    static Optional<PgCounters> read(DataSource db) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT current_setting('shared_preload_libraries') LIKE '%pg_stat_statements%'")) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    return Optional.empty();
                }
            }
            Map<String, Work> byStatement = new HashMap<>();
            long deallocations;
            try {
                s.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
                try (ResultSet rs = s.executeQuery("SELECT dealloc FROM pg_stat_statements_info")) {
                    rs.next();
                    deallocations = rs.getLong(1);
                }
                try (ResultSet rs = s.executeQuery("SELECT query, calls, rows, wal_records, wal_bytes FROM pg_stat_statements"
                        + " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat%'")) {
                    while (rs.next()) {
                        byStatement.merge(rs.getString(1), new Work(rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)), Work::plus);
                    }
                }
            } catch (SQLException notAvailable) {
                // not a superuser, or the extension's files are not installed
                return Optional.empty();
            }
            return Optional.of(new PgCounters(byStatement, deallocations));
        }
    }

    /**
     * What the server did between {@code before} and this reading, the most called statement first; one first seen here
     * counts from 0. Empty when the server evicted statements meanwhile ({@code pg_stat_statements.max} reached): their
     * counts start again, and the differences would be wrong.
     */
    Optional<PgCounters> since(PgCounters before) {
        if (deallocations != before.deallocations) {
            return Optional.empty();
        }
        Map<String, Work> done = new LinkedHashMap<>();
        byStatement.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue().minus(before.byStatement.getOrDefault(e.getKey(), new Work(0, 0, 0, 0)))))
                .filter(e -> e.getValue().calls() > 0)
                .sorted(Map.Entry.<String, Work>comparingByValue((a, b) -> Long.compare(b.calls(), a.calls())).thenComparing(Map.Entry.comparingByKey()))
                .forEach(e -> done.put(e.getKey(), e.getValue()));
        return Optional.of(new PgCounters(done, deallocations));
    }

    /** Every statement's work, added. */
    Work total() {
        return byStatement.values().stream().reduce(new Work(0, 0, 0, 0), Work::plus);
    }
}
