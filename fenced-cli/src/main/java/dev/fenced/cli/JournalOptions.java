package dev.fenced.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.settlement.JournalSchema;
import dev.fenced.settlement.SettlementJournal;
import dev.fenced.settlement.SettlementWorker;
import javax.sql.DataSource;
import picocli.CommandLine.Option;

/** The settlement journal's store, a second database, for the commands that settle. */
public final class JournalOptions {
    @Option(names = "--journal-db-url", paramLabel = "JDBC_URL", defaultValue = "${env:FENCED_JOURNAL_DB_URL}",
            description = "a second database (PostgreSQL or MariaDB) for the settlement journal: one line per confirmed refund, written"
                    + " in a transaction fenced with the run's token (env FENCED_JOURNAL_DB_URL; none by default)")
    String journalDbUrl;

    private HikariDataSource dataSource;

    /** Opens and migrates the journal's database when one is given; null otherwise. The caller closes it. */
    HikariDataSource open(int poolSize) {
        return open(poolSize, DatabaseWaits.SERVER_DEFAULTS);
    }

    /** {@link #open(int)}, every wait on the journal's database bounded by {@code waits}. */
    HikariDataSource open(int poolSize, DatabaseWaits waits) {
        if (journalDbUrl == null || journalDbUrl.isBlank()) {
            return null;
        }
        HikariDataSource opened = Connections.readOnlyDatabase(journalDbUrl, poolSize, waits);
        try {
            JournalSchema.migrate(opened);
        } catch (RuntimeException e) {
            opened.close();
            throw e;
        }
        dataSource = opened;
        return opened;
    }

    /** The journal's database once opened, or null: for an adjustment that builds another journal on it (the lab's control). */
    DataSource dataSource() {
        return dataSource;
    }

    /** The builder with the journal, when there is one. */
    SettlementWorker.Builder apply(SettlementWorker.Builder builder) {
        return dataSource == null ? builder : builder.journal(SettlementJournal.in(dataSource));
    }
}
