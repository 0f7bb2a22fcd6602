package dev.fenced.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * The lease statements of {@link JdbcLeaseStore} for one dialect and table. Every time in them is
 * the database's: the client binds a TTL (a length), never an instant, so a client whose clock is
 * off, or whose session is in another time zone, ends and takes over leases at the same moments as
 * every other client. Each write is one auto-committed statement: a failure leaves no half-written row.
 */
abstract class LeaseSql {
    final String table;
    final String sequence;
    /** False only in tests: the negative control that shows a token going back without the guard. */
    final boolean tokenGuard;
    final int timeoutSeconds;

    LeaseSql(String table, String sequence, boolean tokenGuard, Duration statementTimeout) {
        this.table = table;
        this.sequence = sequence;
        this.tokenGuard = tokenGuard;
        // JDBC counts whole seconds; a bound below one is rounded up rather than dropped.
        this.timeoutSeconds = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (statementTimeout.toMillis() + 999) / 1000));
    }

    static LeaseSql of(JdbcDialect dialect, String table, String sequence, boolean tokenGuard, Duration statementTimeout) {
        return dialect == PostgresDialect.INSTANCE ? new Postgres(table, sequence, tokenGuard, statementTimeout)
                : new MariaDb(table, sequence, tokenGuard, statementTimeout);
    }

    /** Takes the lease when there is none or it ended, and returns its token; 0 when another's is live. */
    abstract long acquire(Connection c, String resource, String ownerId, long ttlMillis) throws SQLException;

    abstract String renewSql();

    abstract String releaseSql();

    abstract String heldSql();

    /** Columns: the live holder or null, the stored token, the live lease's microseconds left (0 when none). */
    abstract String viewSql();

    boolean renew(Connection c, String resource, String ownerId, long token, long ttlMillis) throws SQLException {
        try (PreparedStatement s = prepare(c, renewSql())) {
            s.setLong(1, ttlMillis);
            bindOwner(s, 2, resource, ownerId, token);
            return s.executeUpdate() == 1;
        }
    }

    boolean release(Connection c, String resource, String ownerId, long token) throws SQLException {
        try (PreparedStatement s = prepare(c, releaseSql())) {
            bindOwner(s, 1, resource, ownerId, token);
            return s.executeUpdate() == 1;
        }
    }

    boolean isHeld(Connection c, String resource, String ownerId, long token) throws SQLException {
        try (PreparedStatement s = prepare(c, heldSql())) {
            bindOwner(s, 1, resource, ownerId, token);
            try (ResultSet rs = s.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** Holder (or null), highest token stored (0 for no row), microseconds left. */
    record Row(String holder, long token, long microsLeft) {
    }

    Row view(Connection c, String resource) throws SQLException {
        try (PreparedStatement s = prepare(c, viewSql())) {
            s.setString(1, resource);
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next()) {
                    return new Row(null, 0, 0);
                }
                String holder = rs.getString(1);
                return new Row(holder, rs.getLong(2), holder == null ? 0 : Math.max(0, rs.getLong(3)));
            }
        }
    }

    PreparedStatement prepare(Connection c, String sql) throws SQLException {
        PreparedStatement s = c.prepareStatement(sql);
        s.setQueryTimeout(timeoutSeconds);
        return s;
    }

    private static void bindOwner(PreparedStatement s, int from, String resource, String ownerId, long token) throws SQLException {
        s.setString(from, resource);
        s.setString(from + 1, ownerId);
        s.setLong(from + 2, token);
    }

    /**
     * One statement: the token is drawn in VALUES, before the row lock, so a drawer that stalls
     * there may hold a value below one a faster acquirer stored meanwhile; {@code lease.token <
     * EXCLUDED.token}, checked under the row lock, refuses it. clock_timestamp(), not now(): the
     * expiry is compared after any wait for the row lock, at the moment of the check.
     */
    static final class Postgres extends LeaseSql {
        private final String acquire;

        Postgres(String table, String sequence, boolean tokenGuard, Duration statementTimeout) {
            super(table, sequence, tokenGuard, statementTimeout);
            this.acquire = "INSERT INTO " + table + " AS lease (resource, owner_id, token, expires_at)"
                    + " VALUES (?, ?, nextval('" + sequence + "'), clock_timestamp() + ? * INTERVAL '1 millisecond')"
                    + " ON CONFLICT (resource) DO UPDATE SET owner_id = EXCLUDED.owner_id, token = EXCLUDED.token,"
                    + " expires_at = EXCLUDED.expires_at"
                    + " WHERE (lease.owner_id IS NULL OR lease.expires_at <= clock_timestamp())"
                    + (tokenGuard ? " AND lease.token < EXCLUDED.token" : "")
                    + " RETURNING lease.token";
        }

        @Override
        long acquire(Connection c, String resource, String ownerId, long ttlMillis) throws SQLException {
            try (PreparedStatement s = prepare(c, acquire)) {
                s.setString(1, resource);
                s.setString(2, ownerId);
                s.setLong(3, ttlMillis);
                long token;
                try (ResultSet rs = s.executeQuery()) {
                    token = rs.next() ? rs.getLong(1) : 0;
                }
                requireNoWarning(s, resource);
                return token;
            }
        }

        /**
         * A grant acknowledged with a warning is not used. The one that matters: a commit whose wait
         * for a synchronous standby was cancelled (this statement's own query timeout sends the cancel)
         * is reported as made, "committed locally, but might not have been replicated", and a failover
         * can then lose it and draw its token again. The lease, if kept, ends by its TTL.
         */
        private static void requireNoWarning(PreparedStatement s, String resource) throws SQLException {
            GrantInDoubtException.requireNoWarning(s, "the lease on " + resource + " was granted", " (it ends by its TTL; a commit whose"
                    + " wait for a synchronous standby was cancelled may never have been replicated)");
        }

        @Override
        String renewSql() {
            return "UPDATE " + table + " SET expires_at = clock_timestamp() + ? * INTERVAL '1 millisecond'"
                    + " WHERE resource = ? AND owner_id = ? AND token = ? AND expires_at > clock_timestamp()";
        }

        /**
         * The release's commit does not wait for its WAL flush ({@code synchronous_commit} off for its
         * own transaction only): a release lost in a crash leaves the lease to end by its TTL and
         * changes no token, so it costs time, never safety. The grant's commit does wait: the token
         * it hands out must never be drawn again after a crash.
         */
        @Override
        String releaseSql() {
            return "UPDATE " + table + " SET owner_id = NULL, expires_at = clock_timestamp()"
                    + " FROM (SELECT set_config('synchronous_commit', 'off', true)) AS relaxed_commit"
                    + " WHERE resource = ? AND owner_id = ? AND token = ? AND expires_at > clock_timestamp()";
        }

        @Override
        String heldSql() {
            return "SELECT 1 FROM " + table + " WHERE resource = ? AND owner_id = ? AND token = ? AND expires_at > clock_timestamp()";
        }

        /** One clock reading for the whole row: the holder and its time left must agree. */
        @Override
        String viewSql() {
            return "SELECT CASE WHEN owner_id IS NOT NULL AND expires_at > t.now THEN owner_id END, token,"
                    + " FLOOR(EXTRACT(EPOCH FROM (expires_at - t.now)) * 1000000)::bigint"
                    + " FROM " + table + ", (SELECT clock_timestamp() AS now) t WHERE resource = ?";
        }
    }

    /**
     * MariaDB cannot return a row from INSERT ... ON DUPLICATE KEY UPDATE nor from an UPDATE, so
     * the token is drawn first ({@code NEXTVAL}) and bound into a takeover UPDATE guarded by
     * {@code token < ?}, then, when no row matched, an INSERT IGNORE for a resource never leased:
     * up to three auto-committed statements, each taking one row lock and releasing it at once, so
     * no two of them can deadlock. Every UPDATE here names the primary key of a row that exists or
     * of none; a gap lock of the latter lasts one statement.
     *
     * <p>Times are UTC_TIMESTAMP(3) in a DATETIME(3): the session's time zone takes no part. The
     * statement's start is its clock (MariaDB has no UTC clock_timestamp): after a lock wait the
     * expiry check is earlier than the truth, which refuses rather than takes over, and the new
     * lease ends earlier rather than later.
     */
    static final class MariaDb extends LeaseSql {
        private final String draw;
        private final String takeOver;
        private final String insert;

        MariaDb(String table, String sequence, boolean tokenGuard, Duration statementTimeout) {
            super(table, sequence, tokenGuard, statementTimeout);
            this.draw = "SELECT NEXTVAL(" + sequence + ")";
            this.takeOver = "UPDATE " + table + " SET owner_id = ?, token = ?, expires_at = UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND"
                    + " WHERE resource = ? AND (owner_id IS NULL OR expires_at <= UTC_TIMESTAMP(3))" + (tokenGuard ? " AND token < ?" : "");
            this.insert = "INSERT IGNORE INTO " + table + " (resource, owner_id, token, expires_at)"
                    + " VALUES (?, ?, ?, UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND)";
        }

        @Override
        long acquire(Connection c, String resource, String ownerId, long ttlMillis) throws SQLException {
            long token;
            try (PreparedStatement s = prepare(c, draw); ResultSet rs = s.executeQuery()) {
                rs.next();
                token = rs.getLong(1);
            }
            // The UPDATE always changes owner_id, so found rows and affected rows agree whatever useAffectedRows says.
            try (PreparedStatement s = prepare(c, takeOver)) {
                s.setString(1, ownerId);
                s.setLong(2, token);
                s.setLong(3, Math.multiplyExact(ttlMillis, 1000));
                s.setString(4, resource);
                if (tokenGuard) {
                    s.setLong(5, token);
                }
                if (s.executeUpdate() == 1) {
                    return token;
                }
            }
            // Lengths are checked before (resource 200, owner id 240), so IGNORE hides only the duplicate key.
            try (PreparedStatement s = prepare(c, insert)) {
                s.setString(1, resource);
                s.setString(2, ownerId);
                s.setLong(3, token);
                s.setLong(4, Math.multiplyExact(ttlMillis, 1000));
                return s.executeUpdate() == 1 ? token : 0;
            }
        }

        /**
         * A second renewal within the same millisecond to the same TTL writes the same expiry: with
         * {@code useAffectedRows=true} that counts 0 rows though the lease is live and this owner's,
         * so a 0 is checked once more before it is called a loss.
         */
        @Override
        boolean renew(Connection c, String resource, String ownerId, long token, long ttlMillis) throws SQLException {
            return super.renew(c, resource, ownerId, token, ttlMillis) || isHeld(c, resource, ownerId, token);
        }

        @Override
        String renewSql() {
            return "UPDATE " + table + " SET expires_at = UTC_TIMESTAMP(3) + INTERVAL (? * 1000) MICROSECOND"
                    + " WHERE resource = ? AND owner_id = ? AND token = ? AND expires_at > UTC_TIMESTAMP(3)";
        }

        @Override
        String releaseSql() {
            return "UPDATE " + table + " SET owner_id = NULL, expires_at = UTC_TIMESTAMP(3)"
                    + " WHERE resource = ? AND owner_id = ? AND token = ? AND expires_at > UTC_TIMESTAMP(3)";
        }

        @Override
        String heldSql() {
            return "SELECT 1 FROM " + table + " WHERE resource = ? AND owner_id = ? AND token = ? AND expires_at > UTC_TIMESTAMP(3)";
        }

        @Override
        String viewSql() {
            return "SELECT IF(owner_id IS NOT NULL AND expires_at > UTC_TIMESTAMP(3), owner_id, NULL), token,"
                    + " TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), expires_at) FROM " + table + " WHERE resource = ?";
        }
    }
}
