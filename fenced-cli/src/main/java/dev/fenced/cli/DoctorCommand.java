package dev.fenced.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FencedObserver;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.FencedTable;
import dev.fenced.jdbc.SchemaCheck;
import dev.fenced.settlement.DeploymentLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.RefundSummary;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = {"Check that the database's tables are fit for fencing.",
                "It reads the token counter and guard tables, and the fenced table (the refund table, or --table): fence column"
                        + " BIGINT NOT NULL, a unique id, the state column. With Redis (--redis-url or FENCED_REDIS_URL), also every"
                        + " merchant's tokens: issued by another issuer than --tokens, or Redis's counter below the merchant's stored"
                        + " fences (see fenced tokens).",
                "Read-only. Exit codes: 0 fit, 1 a problem (one line each) or an unreachable server, 2 usage error."})
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

    /** Optional: with Redis, every merchant's token issuer is checked too. */
    @Mixin
    Connections connections;

    @Override
    public Integer call() throws Exception {
        FencedTable fenced = table == null ? RefundSchema.table() : ownTable();
        String dbUrl = databaseOptions.requireUrl();
        if (leaseStoreGiven()) {
            connections.requireLeaseSettings(); // before anything connects
        }
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
        // The tokens are read per merchant from the refund table: only once that table is fit, and only for it.
        boolean tokensFit = !problems.isEmpty() || table != null || !leaseStoreGiven() || tokensFit(dbUrl);
        return problems.isEmpty() && tokensFit ? 0 : FencedCli.RUNTIME_FAILURE;
    }

    /** Whether the chosen lease store can be asked: the database always can, Redis and etcd when their URL is given. */
    private boolean leaseStoreGiven() {
        return switch (connections.backend()) {
            case REDIS -> connections.redisUrl != null && !connections.redisUrl.isBlank();
            case ETCD -> connections.etcdUrl != null && !connections.etcdUrl.isBlank();
            case DATABASE -> true;
        };
    }

    /**
     * The deployment's recorded lease store against --leases, then every merchant's tokens against
     * the stored fences (and --tokens, for Redis), a page of merchants at a time; one line per problem.
     */
    private boolean tokensFit(String dbUrl) {
        int troubled = 0;
        int merchants = 0;
        try (HikariDataSource db = Connections.readOnlyDatabase(dbUrl, 1); OpenLeases leases = connections.openLeasesUnchecked(db, null, FencedObserver.NONE)) {
            String chosen = connections.backend().setting();
            String recorded = DeploymentLeaseStore.recorded(db).orElse(null);
            if (recorded != null && !recorded.equals(chosen)) {
                System.out.println("leases: the deployment's are in " + recorded + ", --leases says " + chosen
                        + ": such a worker is refused; switch with 'fenced migrate --leases " + chosen + "' while no worker runs");
                troubled++;
            }
            for (int offset = 0; ; offset += TOKEN_PAGE) {
                List<RefundSummary> page = RefundSummary.page(db, offset, TOKEN_PAGE);
                for (RefundSummary summary : page) {
                    String resource = Merchants.resource(summary.merchant());
                    String problem = connections.tokensProblem(leases.snapshot(resource), summary.highestFence());
                    if (problem != null) {
                        System.out.println("tokens of " + summary.merchant() + ": " + problem);
                        troubled++;
                    }
                }
                merchants += page.size();
                if (page.size() < TOKEN_PAGE) {
                    break;
                }
            }
        }
        if (troubled == 0) {
            System.out.println("tokens: ok (" + merchants + " merchants, --leases " + chosenStore() + ")");
        }
        return troubled == 0;
    }

    private static final int TOKEN_PAGE = 500;

    private String chosenStore() {
        return connections.backend().setting()
                + (connections.backend() == LeaseBackend.REDIS ? ", --tokens " + connections.tokens.setting() : "");
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
