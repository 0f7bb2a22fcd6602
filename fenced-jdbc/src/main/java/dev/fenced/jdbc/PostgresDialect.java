package dev.fenced.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** PostgreSQL: {@code ON CONFLICT ... RETURNING} for tokens, {@code UPDATE ... RETURNING} for batch claims. */
public final class PostgresDialect implements JdbcDialect {
    public static final PostgresDialect INSTANCE = new PostgresDialect();

    private PostgresDialect() {
    }

    @Override
    public String name() {
        return "postgresql";
    }

    @Override
    public String lockingReadSuffix() {
        return " FOR SHARE";
    }

    /**
     * nextval with a transactional WAL record of its own (an empty logical message, which any role
     * may write), so that its commit waits, under synchronous replication, until the standby holds
     * the WAL up to it, the sequence's record that covers the value included. nextval alone waits
     * only when it writes that record; the next values (up to 32) come back at once from the range
     * it logged, and a failover before the record reached the standby hands them out again
     * (RELIABILITY.md, "A long run"). A transaction id alone is not enough: a commit that wrote no
     * WAL before it waits for nothing. Costs a commit record and its flush per value.
     */
    @Override
    public String nextValueQuery(String sequence) {
        return "SELECT nextval('" + sequence + "'), pg_logical_emit_message(true, 'fenced', '')";
    }

    /**
     * PostgreSQL's setval lowers as readily as it raises, and a sequence cannot be locked against
     * nextval: draw one value first, and only when it is below the floor set the sequence far
     * above it ({@link #RAISE_HEADROOM}), so that values others drew between the two calls, which
     * follow the one drawn here, stay below the new start. Two raises at once are serialized by an
     * advisory lock on the sequence's name, so that one with a lower floor, drawing before the
     * other's setval and setting after it, cannot lower what the other set; each statement waits
     * {@value #RAISE_WAIT_SECONDS} s at most.
     */
    @Override
    public void raiseSequenceAbove(Connection connection, String sequence, long floor) throws SQLException {
        String lockKey = "fenced:raise:" + sequence;
        try (java.sql.PreparedStatement lock = connection.prepareStatement("SELECT pg_advisory_lock(hashtext(?))")) {
            lock.setQueryTimeout(RAISE_WAIT_SECONDS);
            lock.setString(1, lockKey);
            lock.executeQuery().close();
        }
        try (java.sql.PreparedStatement s = connection.prepareStatement(
                "SELECT CASE WHEN nextval('" + sequence + "') <= ? THEN setval('" + sequence + "', ?) ELSE 0 END,"
                        + " pg_logical_emit_message(true, 'fenced', '')")) { // its commit waits for the standby, as a draw's
            s.setQueryTimeout(RAISE_WAIT_SECONDS);
            s.setLong(1, floor);
            s.setLong(2, Math.addExact(floor, RAISE_HEADROOM));
            s.executeQuery().close();
        } finally {
            try (java.sql.PreparedStatement unlock = connection.prepareStatement("SELECT pg_advisory_unlock(hashtext(?))")) {
                unlock.setQueryTimeout(RAISE_WAIT_SECONDS);
                unlock.setString(1, lockKey);
                unlock.executeQuery().close();
            }
        }
    }

    /** The bound on each statement of a raise: it waits only for another raise of the same sequence, which takes milliseconds. */
    static final int RAISE_WAIT_SECONDS = 10;

    /** How far above the floor a raised sequence starts: more values than anyone draws between two calls of one statement. */
    static final long RAISE_HEADROOM = 1_000_000;

    @Override
    public String insertUnlessPresent(String table, String columns, int values) {
        return "INSERT INTO " + table + " (" + columns + ") VALUES (" + Sql.placeholders(values) + ") ON CONFLICT DO NOTHING";
    }

    /** The check divides by zero unless the guard row holds the token; the error aborts the transaction and the server skips the COMMIT. */
    @Override
    public Optional<String> guardCheckAndCommit(String guardTable) {
        return Optional.of("SELECT 1 / (SELECT COUNT(*)::int FROM (SELECT 1 FROM " + guardTable
                + " WHERE resource = ? AND fence = ? FOR SHARE) guard); COMMIT");
    }

    @Override
    public String metadataSchema(Connection connection) throws SQLException {
        return connection.getSchema();
    }

    @Override
    public boolean isSerializationFailure(SQLException e) {
        return "40001".equals(e.getSQLState()) || "40P01".equals(e.getSQLState());
    }

    /** 55P03 lock_not_available (lock_timeout), 57014 query_canceled (statement_timeout). */
    @Override
    public Optional<DatabaseWaitException.Kind> waitRanOut(SQLException e) {
        if ("55P03".equals(e.getSQLState())) {
            return Optional.of(DatabaseWaitException.Kind.LOCK);
        }
        if ("57014".equals(e.getSQLState())) {
            return Optional.of(DatabaseWaitException.Kind.STATEMENT);
        }
        return JdbcDialect.super.waitRanOut(e);
    }

    /** {@code set_config} in one SELECT: one statement whatever is set, in milliseconds. */
    @Override
    public Optional<String> boundWaits(Duration lockWait, Duration statement) {
        List<String> settings = new ArrayList<>();
        if (lockWait != null && !lockWait.isZero()) {
            settings.add("set_config('lock_timeout', '" + Math.max(1, lockWait.toMillis()) + "ms', false)");
        }
        if (statement != null && !statement.isZero()) {
            settings.add("set_config('statement_timeout', '" + Math.max(1, statement.toMillis()) + "ms', false)");
        }
        return settings.isEmpty() ? Optional.empty() : Optional.of("SELECT " + String.join(", ", settings));
    }

    @Override
    public long nextToken(Connection connection, String counterTable, String resource) throws SQLException {
        String sql = "INSERT INTO " + counterTable + " (resource, value) VALUES (?, 1)"
                + " ON CONFLICT (resource) DO UPDATE SET value = " + counterTable + ".value + 1 RETURNING value";
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, resource);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    @Override
    public List<Object> claimAll(Connection connection, FencedTable table, List<?> ids, long token) throws SQLException {
        String sql = new Sql(table).claimAllPrefix + Sql.placeholders(ids.size()) + ") RETURNING " + table.idColumn();
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            BatchParameters.bind(statement, table, ids, token);
            List<Object> claimed = new ArrayList<>();
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    claimed.add(rs.getObject(1));
                }
            }
            return claimed;
        }
    }
}
