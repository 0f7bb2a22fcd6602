package dev.fenced.jdbc;

import java.net.SocketTimeoutException;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;

/**
 * A bound on a database wait ran out: a lock wait ({@code lock_timeout},
 * {@code innodb_lock_wait_timeout}), a statement's time ({@code statement_timeout},
 * {@code max_statement_time}) or the driver's socket timeout. The statement did nothing; the
 * database rolled it back, and the caller's transaction should be rolled back too. It says nothing
 * about who owns the rows: typically another session (a holder stalled inside its transaction)
 * kept the locks. Retry later, under a lease of its own.
 */
public class DatabaseWaitException extends FencedDataAccessException {
    /** What ran out. */
    public enum Kind {
        /** The wait for a row lock another session holds. */
        LOCK("a row lock held by another session"),
        /** The statement's time limit, a lock wait included. */
        STATEMENT("the statement to end (its time limit)"),
        /** The driver's socket timeout: the database sent nothing back for that long. */
        SOCKET("an answer from the database (socket timeout)");

        private final String waitedFor;

        Kind(String waitedFor) {
            this.waitedFor = waitedFor;
        }

        /** What was waited for, e.g. "a row lock held by another session". */
        public String waitedFor() {
            return waitedFor;
        }
    }

    private final Kind kind;
    private final String sqlState;
    private final int vendorCode;

    public DatabaseWaitException(String message, Kind kind, SQLException cause) {
        super(message, cause);
        this.kind = kind;
        this.sqlState = cause == null ? null : cause.getSQLState();
        this.vendorCode = cause == null ? 0 : cause.getErrorCode();
    }

    public Kind kind() {
        return kind;
    }

    public String sqlState() {
        return sqlState;
    }

    public int vendorCode() {
        return vendorCode;
    }

    /**
     * The database wait that {@code error} or one of its causes reports: one already translated,
     * or an {@link SQLException} that a supported dialect classifies as one. Empty otherwise.
     */
    public static Optional<DatabaseWaitException> in(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof DatabaseWaitException wait) {
                return Optional.of(wait);
            }
        }
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException sql) {
                Optional<Kind> kind = kindOf(null, sql);
                if (kind.isPresent()) {
                    return Optional.of(new DatabaseWaitException(String.valueOf(sql.getMessage()), kind.get(), sql));
                }
            }
        }
        return Optional.empty();
    }

    /** The kind of wait {@code e} reports, asking {@code dialect}, or every supported one when it is unknown. */
    static Optional<Kind> kindOf(JdbcDialect dialect, SQLException e) {
        for (JdbcDialect asked : dialect != null ? List.of(dialect) : List.<JdbcDialect>of(PostgresDialect.INSTANCE, MariaDbDialect.INSTANCE)) {
            Optional<Kind> kind = asked.waitRanOut(e);
            if (kind.isPresent()) {
                return kind;
            }
        }
        return Optional.empty();
    }

    /** True when the driver gave up reading: a socket timeout, whatever SQLSTATE the driver put on it. */
    static boolean socketTimedOut(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }
}
