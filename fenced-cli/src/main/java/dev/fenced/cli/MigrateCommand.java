package dev.fenced.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.StoreUnavailableException;
import dev.fenced.internal.Redaction;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcDialect;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.settlement.RefundSchema;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "migrate", mixinStandardHelpOptions = true,
        description = {"Create or bring up to date the schema the other commands need.",
                "That is the refund table, the token counter and guard tables, the token sequences. Safe to run again. seed,"
                        + " settle, worker and reconcile --repair migrate by themselves; status, reconcile and doctor only read, and"
                        + " ask for this command on a database without the schema."})
final class MigrateCommand implements Callable<Integer> {
    /** What the migrations make, as the command reports it. */
    private static final List<String> SCHEMA = List.of(RefundSchema.TABLE, FencedSchema.COUNTER_TABLE, FencedSchema.GUARD_TABLE,
            JdbcSequenceTokenSource.DEFAULT_SEQUENCE, JdbcSequenceTokenSource.EPOCH_SEQUENCE);

    @Mixin
    DatabaseOptions databaseOptions;

    @Override
    public Integer call() throws SQLException {
        String dbUrl = databaseOptions.requireUrl();
        boolean existed;
        // Not migrated on opening: first see what was there. Two connections: Flyway takes both.
        try (HikariDataSource db = Connections.readOnlyDatabase(dbUrl, 2)) {
            try (Connection connection = db.getConnection()) {
                existed = hasRefundTable(connection);
            }
            RefundSchema.migrate(db);
        }
        System.out.println("schema of " + Redaction.describe(dbUrl) + (existed ? " is up to date (" : " created (")
                + String.join(", ", SCHEMA) + ")");
        return 0;
    }

    /**
     * Fails with one line naming the missing refund table and this command, for the commands that
     * only read: they would otherwise stop at the driver's "relation does not exist".
     */
    static void requireSchema(DataSource db) {
        try (Connection connection = db.getConnection()) {
            requireSchema(connection);
        } catch (SQLException e) {
            throw new StoreUnavailableException("could not read the database's schema: " + e.getMessage(), e);
        }
    }

    static void requireSchema(Connection connection) throws SQLException {
        if (!hasRefundTable(connection)) {
            throw new IllegalStateException("the database has no " + RefundSchema.TABLE + " table: create the schema with fenced migrate");
        }
    }

    private static boolean hasRefundTable(Connection connection) throws SQLException {
        String schema = JdbcDialect.detect(connection).metadataSchema(connection);
        try (ResultSet tables = connection.getMetaData().getTables(connection.getCatalog(), schema, RefundSchema.TABLE, null)) {
            return tables.next();
        }
    }
}
