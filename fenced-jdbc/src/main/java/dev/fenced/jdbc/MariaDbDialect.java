package dev.fenced.jdbc;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * MariaDB (and MySQL): {@code LAST_INSERT_ID(value + 1)} for tokens; no {@code UPDATE ...
 * RETURNING}, so a batch claim reads back the rows that now carry its token.
 *
 * <p>The driver reports found rows, not changed rows, by default. Every fenced UPDATE here changes
 * each row it matches (the claim raises the fence, the confirm changes the state), so both counts
 * agree and a connection with {@code useAffectedRows=true} gives the same answers.
 */
public final class MariaDbDialect implements JdbcDialect {
    public static final MariaDbDialect INSTANCE = new MariaDbDialect();
    private static final int ER_CHECKREAD = 1020;
    private static final int ER_LOCK_DEADLOCK = 1213;
    private static final int ER_LOCK_WAIT_TIMEOUT = 1205;
    private static final int ER_STATEMENT_TIMEOUT = 1969;

    private MariaDbDialect() {
    }

    @Override
    public String name() {
        return "mariadb";
    }

    @Override
    public String lockingReadSuffix() {
        return " LOCK IN SHARE MODE";
    }

    /** MariaDB's default collations ignore case and trailing spaces: 'R_1 ' and 'r_1' are one row. */
    @Override
    public String idKey(Object id) {
        return id instanceof String text ? text.stripTrailing().toLowerCase(java.util.Locale.ROOT) : String.valueOf(id);
    }

    @Override
    public String nextValueQuery(String sequence) {
        return "SELECT NEXTVAL(" + sequence + ")";
    }

    /** SETVAL ignores a value below the sequence's: it never lowers one that others drew from meanwhile. */
    @Override
    public void raiseSequenceAbove(Connection connection, String sequence, long floor) throws SQLException {
        try (java.sql.PreparedStatement s = connection.prepareStatement("SELECT SETVAL(" + sequence + ", ?)")) {
            s.setQueryTimeout(PostgresDialect.RAISE_WAIT_SECONDS);
            s.setLong(1, floor);
            s.executeQuery().close();
        }
    }

    /** INSERT IGNORE would also turn a truncation into a warning: callers check their values' lengths first. */
    @Override
    public String insertUnlessPresent(String table, String columns, int values) {
        return "INSERT IGNORE INTO " + table + " (" + columns + ") VALUES (" + Sql.placeholders(values) + ")";
    }

    /** The driver sends two statements at once only with {@code allowMultiQueries}, which fenced does not ask for. */
    @Override
    public Optional<String> guardCheckAndCommit(String guardTable) {
        return Optional.empty();
    }

    /** The driver names databases as catalogs and has no schemas. */
    @Override
    public String metadataSchema(Connection connection) {
        return null;
    }

    @Override
    public boolean isSerializationFailure(SQLException e) {
        return "40001".equals(e.getSQLState()) || e.getErrorCode() == ER_CHECKREAD || e.getErrorCode() == ER_LOCK_DEADLOCK;
    }

    /** 1205 lock wait timeout (innodb_lock_wait_timeout), 1969 / SQLSTATE 70100 max_statement_time exceeded. */
    @Override
    public Optional<DatabaseWaitException.Kind> waitRanOut(SQLException e) {
        if (e.getErrorCode() == ER_LOCK_WAIT_TIMEOUT) {
            return Optional.of(DatabaseWaitException.Kind.LOCK);
        }
        if (e.getErrorCode() == ER_STATEMENT_TIMEOUT) {
            return Optional.of(DatabaseWaitException.Kind.STATEMENT);
        }
        return JdbcDialect.super.waitRanOut(e);
    }

    /**
     * One SET of both: {@code innodb_lock_wait_timeout} counts whole seconds (rounded up, at least
     * 1; 0 would mean not to wait at all), {@code max_statement_time} seconds to the microsecond.
     */
    @Override
    public Optional<String> boundWaits(Duration lockWait, Duration statement) {
        List<String> settings = new ArrayList<>();
        if (lockWait != null && !lockWait.isZero()) {
            long seconds = Math.max(1, (lockWait.toMillis() + 999) / 1000);
            settings.add("innodb_lock_wait_timeout = " + seconds);
        }
        if (statement != null && !statement.isZero()) {
            settings.add("max_statement_time = " + BigDecimal.valueOf(Math.max(1, statement.toMillis()), 3).toPlainString());
        }
        return settings.isEmpty() ? Optional.empty() : Optional.of("SET SESSION " + String.join(", ", settings));
    }

    @Override
    public long nextToken(Connection connection, String counterTable, String resource) throws SQLException {
        String upsert = "INSERT INTO " + counterTable + " (resource, value) VALUES (?, LAST_INSERT_ID(1))"
                + " ON DUPLICATE KEY UPDATE value = LAST_INSERT_ID(value + 1)";
        try (PreparedStatement statement = connection.prepareStatement(upsert)) {
            statement.setString(1, resource);
            statement.executeUpdate();
        }
        // LAST_INSERT_ID() is per connection, so no other caller's increment can be read here.
        try (PreparedStatement statement = connection.prepareStatement("SELECT LAST_INSERT_ID()");
             ResultSet rs = statement.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Override
    public List<Object> claimAll(Connection connection, FencedTable table, List<?> ids, long token) throws SQLException {
        Sql sql = new Sql(table);
        try (PreparedStatement statement = connection.prepareStatement(sql.claimAllPrefix + Sql.placeholders(ids.size()) + ")")) {
            BatchParameters.bind(statement, table, ids, token);
            if (statement.executeUpdate() == 0) {
                return List.of();
            }
        }
        // Only this holder ever writes this token, so the rows in the claimed state that carry it
        // are exactly the rows this statement claimed and still owns.
        String readBack = "SELECT " + table.idColumn() + " FROM " + table.table() + " WHERE " + table.fenceColumn() + " = ? AND "
                + table.stateColumn() + " = ? AND " + table.idColumn() + " IN (" + Sql.placeholders(ids.size()) + ")";
        try (PreparedStatement statement = connection.prepareStatement(readBack)) {
            statement.setLong(1, token);
            statement.setString(2, table.claimedState());
            for (int i = 0; i < ids.size(); i++) {
                BatchParameters.value(statement, 3 + i, ids.get(i));
            }
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
