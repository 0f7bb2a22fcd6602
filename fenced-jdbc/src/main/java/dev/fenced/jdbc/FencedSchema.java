package dev.fenced.jdbc;

import dev.fenced.StoreUnavailableException;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * Creates the tables fenced ships with, by Flyway migrations for PostgreSQL and MariaDB: the
 * token counter ({@value #COUNTER_TABLE}) and the reference {@value #REFUND_TABLE} table the
 * settlement worker uses. Its history table is {@value #HISTORY_TABLE}, so it never collides with
 * the application's own Flyway history. Requires flyway-core on the class path.
 */
public final class FencedSchema {
    public static final String COUNTER_TABLE = "fence_counter";
    public static final String REFUND_TABLE = "refund";
    public static final String HISTORY_TABLE = "fenced_schema_history";

    private FencedSchema() {
    }

    /** The reference refund table as a {@link FencedTable}, scoped by merchant. */
    public static FencedTable refundTable() {
        return FencedTable.builder(REFUND_TABLE).scopeColumn("merchant").build();
    }

    /** Applies any migration not yet applied; safe to call from every process at start-up. */
    public static void migrate(DataSource dataSource) {
        String dialect;
        try (Connection connection = dataSource.getConnection()) {
            dialect = JdbcDialect.detect(connection).name();
        } catch (SQLException e) {
            throw new StoreUnavailableException("could not connect to the database to migrate it: " + e.getMessage(), e);
        }
        Flyway.configure()
                .dataSource(dataSource)
                .locations("classpath:dev/fenced/jdbc/migration/" + dialect)
                .table(HISTORY_TABLE)
                .baselineOnMigrate(true)
                .baselineVersion("0")
                .load()
                .migrate();
    }
}
