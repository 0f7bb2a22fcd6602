package dev.fenced.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.StoreUnavailableException;
import dev.fenced.internal.Redaction;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcDialect;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.settlement.DeploymentLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.RefundSummary;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "migrate", mixinStandardHelpOptions = true,
        description = {"Create or bring up to date the schema the other commands need.",
                "That is the refund table, the token counter and guard tables, the token sequences. Safe to run again. seed,"
                        + " settle, worker and reconcile --repair migrate by themselves; status, reconcile and doctor only read, and"
                        + " ask for this command on a database without the schema.",
                "With --leases: also switch the deployment's lease store (recorded in the database; every worker must use it) and raise"
                        + " that store's tokens above every merchant's stored fence. Run it while no worker runs."})
final class MigrateCommand implements Callable<Integer> {
    /** What the migrations make, as the command reports it. */
    private static final List<String> SCHEMA = List.of(RefundSchema.TABLE, FencedSchema.COUNTER_TABLE, FencedSchema.GUARD_TABLE,
            JdbcSequenceTokenSource.DEFAULT_SEQUENCE, JdbcSequenceTokenSource.EPOCH_SEQUENCE);

    @Mixin
    DatabaseOptions databaseOptions;

    @Option(names = "--leases", paramLabel = "redis|database|etcd", converter = LeaseBackend.Converter.class,
            description = "switch this deployment's leases to this store, its tokens raised above the stored fences (no environment"
                    + " fallback: a switch is deliberate)")
    LeaseBackend switchLeasesTo;

    @Option(names = "--redis-url", paramLabel = "URL", defaultValue = "${env:FENCED_REDIS_URL}",
            description = "with --leases redis: Redis, redis://[user:password@]host:port (env FENCED_REDIS_URL)")
    String redisUrl;

    @Option(names = "--etcd-url", paramLabel = "URLS", defaultValue = "${env:FENCED_ETCD_URL}",
            description = "with --leases etcd: its endpoints, http://host:port[,...] (env FENCED_ETCD_URL)")
    String etcdUrl;

    @Override
    public Integer call() throws SQLException {
        String dbUrl = databaseOptions.requireUrl();
        Connections leases = switchLeasesTo == null ? null : leaseOptions();
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
        if (leases != null) {
            switchLeases(dbUrl, leases);
        }
        return 0;
    }

    private Connections leaseOptions() {
        Connections options = new Connections();
        options.leaseBackend = switchLeasesTo;
        options.redisUrl = redisUrl;
        options.etcdUrl = etcdUrl;
        options.tokens = dev.fenced.redis.TokenIssuer.REDIS;
        options.redisTlsVerify = "full";
        options.requireLeaseSettings(); // before anything connects
        return options;
    }

    /**
     * Switches in three steps: the record first says a switch is under way, so that from then on
     * every worker, of either store, takes no new lease; then the new store's tokens are raised
     * {@value #SWITCH_MARGIN} above every merchant's highest stored fence; then the new store is
     * recorded. The margin is for tokens the old store handed to holders still finishing a run,
     * which no row shows yet, and for fences in tables the refund rows do not show (the journal's
     * guard). A switch that fails half-way leaves the record saying so: run it again.
     */
    private static void switchLeases(String dbUrl, Connections options) {
        int merchants = 0;
        String setting = options.backend().setting();
        try (HikariDataSource db = Connections.database(dbUrl, 2);
             OpenLeases leases = options.openLeasesUnchecked(db, "migrate", dev.fenced.FencedObserver.NONE)) {
            DeploymentLeaseStore.beginSwitch(db, setting);
            for (int offset = 0; ; offset += PAGE) {
                List<RefundSummary> page = RefundSummary.page(db, offset, PAGE);
                for (RefundSummary summary : page) {
                    if (summary.highestFence() > 0) {
                        String resource = Merchants.resource(summary.merchant());
                        long above = Math.addExact(summary.highestFence(), SWITCH_MARGIN);
                        raise(leases, resource, above);
                    }
                }
                merchants += page.size();
                if (page.size() < PAGE) {
                    break;
                }
            }
            DeploymentLeaseStore.switchTo(db, setting);
        }
        System.out.println("leases: " + options.backend().label() + " for this deployment from now on; its tokens raised above the"
                + " stored fences of " + merchants + (merchants == 1 ? " merchant" : " merchants"));
    }

    /** Redis's counter may be missing, which a raise of a stored fence would leave to the next reseed: create it above. */
    private static void raise(OpenLeases leases, String resource, long above) {
        if (leases.redis().isPresent()) {
            try {
                leases.redis().get().raiseCounter(resource, above);
                return;
            } catch (dev.fenced.CounterLostException lost) {
                // lost after tokens were issued: the next acquisition reseeds it from the fence floor, raised below
            }
        }
        leases.store().observeStoredFence(resource, above);
    }

    private static final int PAGE = 500;
    /** How far above a merchant's highest stored fence a switch puts the new store's tokens. */
    static final long SWITCH_MARGIN = 1_000_000;

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
