package dev.fenced.settlement;

import dev.fenced.jdbc.FencedSchema;
import javax.sql.DataSource;

/**
 * The journal's store: the {@value #TABLE} table (scripts under {@value #SCRIPTS}, history
 * {@value #HISTORY_TABLE}) and the library's guard table, by Flyway, on PostgreSQL or MariaDB.
 */
public final class JournalSchema {
    public static final String TABLE = "settlement_journal";
    public static final String HISTORY_TABLE = "fenced_journal_history";
    public static final String SCRIPTS = "dev/fenced/settlement/journal";

    private JournalSchema() {
    }

    /** Creates or upgrades the journal table and the guard table; safe to call from every process at start-up. */
    public static void migrate(DataSource dataSource) {
        FencedSchema.migrate(dataSource);
        FencedSchema.migrate(dataSource, SCRIPTS, HISTORY_TABLE);
    }
}
