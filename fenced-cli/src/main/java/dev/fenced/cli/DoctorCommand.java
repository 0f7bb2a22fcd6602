package dev.fenced.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.FencedTable;
import dev.fenced.jdbc.SchemaCheck;
import dev.fenced.settlement.RefundSchema;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = {"Check that the database's tables are fit for fencing: the token counter and guard tables, and the",
                "fenced table (the refund table, or --table): fence column BIGINT NOT NULL, a unique id, the state column.",
                "Read-only. Exit codes: 0 fit, 1 a problem (one line each) or an unreachable database, 2 usage error."})
final class DoctorCommand implements Callable<Integer> {
    @Option(names = "--table", description = "a fenced table of your own instead of the refund table")
    String table;

    @Option(names = "--id-column", defaultValue = "id", description = "with --table (default ${DEFAULT-VALUE})")
    String idColumn;

    @Option(names = "--state-column", defaultValue = "state", description = "with --table (default ${DEFAULT-VALUE})")
    String stateColumn;

    @Option(names = "--fence-column", defaultValue = "fence", description = "with --table (default ${DEFAULT-VALUE})")
    String fenceColumn;

    @Option(names = "--scope-column", description = "with --table: the column the id is unique within, if any")
    String scopeColumn;

    @Mixin
    DatabaseOptions databaseOptions;

    @Override
    public Integer call() throws Exception {
        FencedTable fenced = table == null ? RefundSchema.table() : ownTable();
        String dbUrl = Connections.require(databaseOptions.dbUrl, "--db-url", "FENCED_DB_URL");
        List<SchemaCheck.Problem> problems = new ArrayList<>();
        try (HikariDataSource db = Connections.readOnlyDatabase(dbUrl, 1); Connection connection = db.getConnection()) {
            if (table == null) {
                MigrateCommand.requireSchema(connection);
            }
            problems.addAll(SchemaCheck.checkLibraryTables(connection));
            problems.addAll(SchemaCheck.check(connection, fenced));
        }
        for (String checked : List.of(FencedSchema.COUNTER_TABLE, FencedSchema.GUARD_TABLE, fenced.table())) {
            List<SchemaCheck.Problem> mine = problems.stream().filter(p -> p.table().equals(checked)).toList();
            if (mine.isEmpty()) {
                System.out.println(checked + ": ok");
            }
            mine.forEach(System.out::println);
        }
        return problems.isEmpty() ? 0 : FencedCli.RUNTIME_FAILURE;
    }

    /** The --table options as a FencedTable; a name that is no SQL identifier is a usage error. */
    private FencedTable ownTable() {
        FencedTable.Builder builder = FencedTable.builder(table).idColumn(idColumn).stateColumn(stateColumn).fenceColumn(fenceColumn);
        if (scopeColumn != null) {
            builder.scopeColumn(scopeColumn);
        }
        return builder.build();
    }
}
