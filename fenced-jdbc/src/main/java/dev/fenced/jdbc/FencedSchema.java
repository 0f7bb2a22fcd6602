package dev.fenced.jdbc;

import dev.fenced.StoreUnavailableException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * Creates the tables the library itself needs, the token counter ({@value #COUNTER_TABLE}) of
 * {@link JdbcTokenSource}, the guard rows ({@value #GUARD_TABLE}) of {@link FencedTransactions} and
 * the leases ({@value JdbcLeaseStore#DEFAULT_TABLE}) of {@link JdbcLeaseStore}, and the sequences of
 * {@link JdbcSequenceTokenSource}, by Flyway migrations for PostgreSQL or MariaDB; the tables a
 * {@link FencedTable} protects are the application's own. Its history table is {@value #HISTORY_TABLE}, so it never collides with the application's Flyway history. Requires
 * flyway-core (and flyway-database-postgresql or flyway-mysql) on the class path; teams on another
 * migration tool apply the scripts themselves: they are in this jar under
 * {@value #SCRIPTS}{@code /postgresql} and {@code /mariadb}, and each is safe to run again.
 */
public final class FencedSchema {
    public static final String COUNTER_TABLE = "fence_counter";
    public static final String GUARD_TABLE = FencedTransactions.DEFAULT_GUARD_TABLE;
    public static final String HISTORY_TABLE = "fenced_schema_history";
    public static final String SCRIPTS = "dev/fenced/jdbc/migration";

    private FencedSchema() {
    }

    /** Applies any migration not yet applied; safe to call from every process at start-up. */
    public static void migrate(DataSource dataSource) {
        migrate(dataSource, SCRIPTS, HISTORY_TABLE);
    }

    /**
     * Applies the migrations under {@code scriptsLocation}{@code /<dialect>} on the class path (the
     * dialect is {@code postgresql} or {@code mariadb}), recorded in {@code historyTable}: how a
     * module that ships its own tables (the settlement worker's {@code refund}) migrates them with
     * the same rules. Migrations recorded in the history but no longer shipped are ignored: an
     * earlier release kept more tables under one history. (Versions 2 and 3 of the library's own
     * history are retired that way: they made the refund table, which the settlement module now
     * owns; V4 makes the guard table, V5 the token sequence of {@link JdbcSequenceTokenSource}, V6 the sequence of
     * its {@link JdbcSequenceTokenSource#epochs epochs}, V7 the lease table of {@link JdbcLeaseStore}.)
     */
    public static void migrate(DataSource dataSource, String scriptsLocation, String historyTable) {
        flyway(dataSource, scriptsLocation, historyTable).migrate();
    }

    /**
     * The library's migrations not yet applied to this database ({@code V7 fence lease}, say): empty
     * when its tables are current. Reads the history, changes nothing.
     */
    public static List<String> pending(DataSource dataSource) {
        return Arrays.stream(flyway(dataSource, SCRIPTS, HISTORY_TABLE).info().pending())
                .map(migration -> "V" + migration.getVersion() + " " + migration.getDescription())
                .toList();
    }

    private static Flyway flyway(DataSource dataSource, String scriptsLocation, String historyTable) {
        String dialect;
        try (Connection connection = dataSource.getConnection()) {
            dialect = JdbcDialect.detect(connection).name();
        } catch (SQLException e) {
            throw new StoreUnavailableException("could not connect to the database to migrate it: " + e.getMessage(), e);
        }
        return Flyway.configure()
                .dataSource(dataSource)
                .locations("classpath:" + scriptsLocation + "/" + dialect)
                .table(SqlIdentifiers.column("history table", historyTable))
                .baselineOnMigrate(true)
                .baselineVersion("0")
                .ignoreMigrationPatterns("*:missing", "*:future")
                .load();
    }
}
