package dev.fenced.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;

/**
 * PostgreSQL's own account of its work, read before and after a run: the database's transactions and
 * rows ({@code pg_stat_database}), the cluster's WAL ({@code pg_stat_wal}, PostgreSQL 14 and later) and,
 * when the server preloads {@code pg_stat_statements}, every statement's calls. What the client sends is
 * counted by {@code WorkCountTest}; this is what the server says it did.
 *
 * <p>The first two are the cumulative statistics, which a backend publishes when it has been idle for
 * up to a second: read them {@link #PUBLISH_DELAY} after the work they should include.
 * {@code pg_stat_statements} counts as each statement ends.
 */
record PgCounters(long transactions, long rowsInserted, long rowsUpdated, long rowsFetched, long walRecords, long walBytes,
                  Map<String, Long> callsByStatement) {
    /** PostgreSQL 15's PGSTAT_MIN_INTERVAL (1 s), with a margin: a backend's counts are in the views this long after it went idle. */
    static final Duration PUBLISH_DELAY = Duration.ofMillis(1_200);

    /** Reads the counters of the database {@code db} connects to; a counter the server does not keep is -1, no statements an empty map. */
    static PgCounters read(DataSource db) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            long transactions;
            long inserted;
            long updated;
            long fetched;
            try (ResultSet rs = s.executeQuery("SELECT xact_commit + xact_rollback, tup_inserted, tup_updated, tup_fetched"
                    + " FROM pg_stat_database WHERE datname = current_database()")) {
                rs.next();
                transactions = rs.getLong(1);
                inserted = rs.getLong(2);
                updated = rs.getLong(3);
                fetched = rs.getLong(4);
            }
            long walRecords = -1;
            long walBytes = -1;
            if (c.getMetaData().getDatabaseMajorVersion() >= 14) {
                try (ResultSet rs = s.executeQuery("SELECT wal_records, wal_bytes FROM pg_stat_wal")) {
                    rs.next();
                    walRecords = rs.getLong(1);
                    walBytes = rs.getLong(2);
                }
            }
            return new PgCounters(transactions, inserted, updated, fetched, walRecords, walBytes, statements(c));
        }
    }

    /** Calls by statement text in this database, when {@code pg_stat_statements} is preloaded; else empty. */
    private static Map<String, Long> statements(Connection c) {
        Map<String, Long> calls = new HashMap<>();
        try (Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT current_setting('shared_preload_libraries') LIKE '%pg_stat_statements%'")) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    return Map.of();
                }
            }
            s.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            try (ResultSet rs = s.executeQuery("SELECT query, calls FROM pg_stat_statements"
                    + " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())")) {
                while (rs.next()) {
                    calls.merge(rs.getString(1), rs.getLong(2), Long::sum);
                }
            }
            return calls;
        } catch (SQLException notAvailable) {
            // not a superuser, or the extension's files are not installed: the server's other counters still tell
            return Map.of();
        }
    }

    /** What the server did between {@code before} and this reading; a statement first seen here counts from 0. */
    PgCounters since(PgCounters before) {
        Map<String, Long> calls = new LinkedHashMap<>();
        callsByStatement.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.callsByStatement.getOrDefault(e.getKey(), 0L)))
                .filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> calls.put(e.getKey(), e.getValue()));
        return new PgCounters(transactions - before.transactions, rowsInserted - before.rowsInserted, rowsUpdated - before.rowsUpdated,
                rowsFetched - before.rowsFetched, walRecords < 0 ? -1 : walRecords - before.walRecords,
                walBytes < 0 ? -1 : walBytes - before.walBytes, calls);
    }

    /** Every statement's calls, added. */
    long statements() {
        return callsByStatement.values().stream().mapToLong(Long::longValue).sum();
    }
}
