package dev.fenced.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What differs between the databases fenced supports; everything else is database-neutral.
 * Implementations are stateless and thread-safe.
 */
public interface JdbcDialect {

    /** A short name, e.g. {@code postgresql}. */
    String name();

    /** True when the error aborted the transaction because of a concurrent one; it may be retried. */
    boolean isSerializationFailure(SQLException e);

    /**
     * What ran out when {@code e} ended a statement because a bound on a wait fired (a lock wait,
     * the statement's time, the driver's socket timeout); empty for any other error.
     */
    default Optional<DatabaseWaitException.Kind> waitRanOut(SQLException e) {
        return DatabaseWaitException.socketTimedOut(e) ? Optional.of(DatabaseWaitException.Kind.SOCKET) : Optional.empty();
    }

    /**
     * One statement that bounds a session's waits, for every new connection (a pool's init SQL):
     * a lock wait of at most {@code lockWait}, a statement of at most {@code statement}, each
     * rounded up to what the server can express. Zero or null leaves the server's own setting;
     * empty when both do.
     */
    Optional<String> boundWaits(Duration lockWait, Duration statement);

    /**
     * Adds one to the resource's counter row (creating it at 1) and returns the new value, in one
     * statement that is atomic under concurrent callers.
     */
    long nextToken(Connection connection, String counterTable, String resource) throws SQLException;

    /**
     * Claims the rows among {@code ids} that the token may claim, in one statement, and returns the
     * ids it claimed.
     */
    List<Object> claimAll(Connection connection, FencedTable table, List<?> ids, long token) throws SQLException;

    /**
     * What a locking read appends to a SELECT, so that it reads the latest committed version of a
     * row (and keeps it until the transaction ends) whatever the isolation level.
     */
    String lockingReadSuffix();

    /**
     * A query for the next value of {@code sequence}, a checked identifier, in its first column; run
     * in auto-commit, so that its commit makes the value as durable as any write (other columns may
     * serve that end).
     */
    String nextValueQuery(String sequence);

    /**
     * Raises {@code sequence} (a checked identifier) so that every later value is above
     * {@code floor}, never lowering it under the callers that draw from it meanwhile.
     */
    void raiseSequenceAbove(Connection connection, String sequence, long floor) throws SQLException;

    /**
     * An INSERT of one row into {@code table} ({@code columns}, a checked comma-separated list, and
     * {@code values} bound parameters) that inserts nothing, without an error, when the row's key
     * is already there: the update count says which happened.
     */
    String insertUnlessPresent(String table, String columns, int values);

    /**
     * The guard's check and the COMMIT in one round trip, where this database's driver sends two
     * statements at once: the check (resource, token bound) fails the transaction unless the
     * guard row holds the token, taking its shared lock, and the COMMIT is then skipped. Empty
     * where it cannot be done in one round trip.
     */
    Optional<String> guardCheckAndCommit(String guardTable);

    /** The schema to name in {@link java.sql.DatabaseMetaData} lookups: null where the driver has none. */
    String metadataSchema(Connection connection) throws SQLException;

    /**
     * The key under which this database compares a row id: the id itself, or for a case-insensitive,
     * trailing-space-insensitive collation its folded form.
     */
    default String idKey(Object id) {
        return String.valueOf(id);
    }

    /** The dialect for the database behind {@code connection}. */
    static JdbcDialect detect(Connection connection) throws SQLException {
        DatabaseMetaData database = connection.getMetaData();
        return detect(database.getDatabaseProductName(), database.getDatabaseProductVersion());
    }

    /**
     * The dialect for a product name and version as a driver reports them. A MariaDB server reached by
     * MySQL's driver is named MySQL, its version still says MariaDB ({@code 5.5.5-10.11.6-MariaDB});
     * a MySQL server is refused by name, whatever driver reached it.
     *
     * @throws UnsupportedDatabaseException for anything but PostgreSQL and MariaDB
     */
    static JdbcDialect detect(String product, String version) {
        if (product.equalsIgnoreCase("PostgreSQL")) {
            return PostgresDialect.INSTANCE;
        }
        if (product.equalsIgnoreCase("MariaDB") || product.equalsIgnoreCase("MySQL") && version != null && version.contains("MariaDB")) {
            return MariaDbDialect.INSTANCE;
        }
        if (product.equalsIgnoreCase("MySQL")) {
            throw new UnsupportedDatabaseException(product + " " + version, "MySQL has no sequences (CREATE SEQUENCE, NEXTVAL), from which"
                    + " fenced draws tokens, epochs and leases; fenced supports PostgreSQL and MariaDB");
        }
        throw new UnsupportedDatabaseException(product + " " + version, "fenced supports PostgreSQL and MariaDB");
    }
}
