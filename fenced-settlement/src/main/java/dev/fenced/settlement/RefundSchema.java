package dev.fenced.settlement;

import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.FencedTable;
import javax.sql.DataSource;

/**
 * The settlement worker's {@value #TABLE} table: its shape as a {@link FencedTable}, and its
 * Flyway migrations for PostgreSQL and MariaDB (with the library's token counter), recorded in
 * {@value #HISTORY_TABLE}. Teams on another migration tool apply the scripts under
 * {@value #SCRIPTS} in this jar themselves; each is safe to run again. A table an earlier release
 * made under the library's history is brought up to date, never created twice.
 */
public final class RefundSchema {
    public static final String TABLE = "refund";
    public static final String HISTORY_TABLE = "fenced_settlement_history";
    public static final String SCRIPTS = "dev/fenced/settlement/migration";

    /** A refund waits {@code pending}, is {@code sending} while its gateway call may be out, and is {@code sent} once confirmed. */
    private static final FencedTable REFUND = FencedTable.builder(TABLE).scopeColumn("merchant").states("pending", "sending", "sent").build();

    private RefundSchema() {
    }

    /** The refund table as a {@link FencedTable}, scoped by merchant, with the refund's states. */
    public static FencedTable table() {
        return REFUND;
    }

    /** Creates or upgrades the token counter and the refund table; safe to call from every process at start-up. */
    public static void migrate(DataSource dataSource) {
        FencedSchema.migrate(dataSource);
        FencedSchema.migrate(dataSource, SCRIPTS, HISTORY_TABLE);
    }
}
