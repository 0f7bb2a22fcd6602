package dev.fenced.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FencedObserver;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.Reconciliation.Discrepancy;
import dev.fenced.settlement.Reconciliation.Report;
import dev.fenced.settlement.Reconciliation;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "reconcile", mixinStandardHelpOptions = true,
        description = {"Compare every refund row of a merchant with the gateway, key by key.",
                "With --repair, it fixes the safe cases under the merchant's lease and a fresh token, through fenced writes; a settled"
                        + " row whose refund the provider failed since becomes returned, as its lost webhook would have made it.",
                "Exit codes: 0 the rows and the gateway agree (after the repair), 8 discrepancies remain or failed rows without"
                        + " a refund (they need an operator: --repair --retry-failed sends them again) or rows past the key retention"
                        + " with no refund (--repair --resend-expired) or returned refunds (--repair --resend-returned), 4 a worker holds the"
                        + " merchant's lease (--repair), 15 a database wait ran out (a row lock another session kept past"
                        + " --lock-timeout), 1 runtime failure, 2 usage error."})
final class ReconcileCommand implements Callable<Integer> {
    static final int DISCREPANCIES = 8;

    @Option(names = "--merchant", required = true, description = "merchant id, e.g. m_4471")
    String merchant;

    @Option(names = "--repair", description = "mark sent every row whose refund the gateway holds (pending, sending or failed rows);"
            + " return settled rows whose refund the provider failed since")
    boolean repair;

    @Option(names = "--retry-failed", description = "with --repair: put failed rows without a refund back to pending, for another attempt under the same key")
    boolean retryFailed;

    @Option(names = "--resend-expired", description = "with --repair: give a row stuck in sending past the gateway's key retention,"
            + " with no refund under its key or reference, a new key and put it back to pending")
    boolean resendExpired;

    @Option(names = "--resend-returned", description = "with --repair: give a returned row (its refund failed or was canceled at"
            + " the gateway: no money moved) a new key and put it back to pending, for a new attempt")
    boolean resendReturned;

    @Mixin
    KeyRetentionOptions keyRetention;

    @Option(names = "--ttl", defaultValue = "30s", converter = DurationConverter.class, description = "the repair's lease TTL (default ${DEFAULT-VALUE})")
    Duration ttl;

    @Option(names = "--json", description = "print one JSON document")
    boolean json;

    @Mixin
    Connections connections;

    @Mixin
    DatabaseOptions databaseOptions;

    @Mixin
    DatabaseWaitOptions databaseWaits;

    @Mixin
    GatewayOptions gatewayOptions;

    @Mixin
    ProgressOptions progressOptions;

    @Override
    public Integer call() throws Exception {
        Merchants.requireValid(merchant);
        Connections.requireUsableTtl(ttl);
        DatabaseWaits waits = databaseWaits.resolve(ttl);
        if (retryFailed && !repair) {
            throw new UsageException("--retry-failed goes with --repair");
        }
        if (resendExpired && !repair) {
            throw new UsageException("--resend-expired goes with --repair");
        }
        if (resendReturned && !repair) {
            throw new UsageException("--resend-returned goes with --repair");
        }
        String dbUrl = databaseOptions.requireUrl();
        String gatewayUrl = gatewayOptions.requireUrl();
        if (repair) {
            connections.requireLeaseSettings(); // before anything connects
        }
        Report report;
        try (HikariDataSource db = repair ? Connections.database(dbUrl, 2, waits) : Connections.readOnlyDatabase(dbUrl, 2, waits);
             ShownProgress shown = new ShownProgress()) {
            MigrateCommand.requireSchema(db);
            Reconciliation reconciliation = keyRetention.apply(Reconciliation.of(db, Connections.gateway(gatewayUrl))).reportingTo(shown);
            if (!repair) {
                report = reconciliation.check(merchant);
            } else {
                try (OpenLeases leases = connections.openLeases(db, "reconcile", FencedObserver.NONE)) {
                    report = reconciliation.repair(merchant, leases.store(), ttl,
                            new Reconciliation.Repairs(retryFailed, resendExpired, resendReturned));
                } catch (Reconciliation.LeaseHeldException busy) {
                    System.err.println("fenced reconcile: " + busy.getMessage());
                    return SettleCommand.LEASE_BUSY;
                }
            }
        }
        print(report);
        return report.unresolved().isEmpty() && failedLeft(report) == 0 ? 0 : DISCREPANCIES;
    }

    /** Failed rows without a refund that the repair did not put back to pending: a refund not paid, for an operator to decide. */
    private static long failedLeft(Report report) {
        return report.failed().stream().filter(id -> !report.retried().contains(id)).count();
    }

    /** Rows compared, on stderr: the bar or lines start once the rows are read and their count is known. */
    private final class ShownProgress implements Reconciliation.ProgressListener, AutoCloseable {
        private Progress progress = Progress.off();

        @Override
        public void rowsToCheck(int rows) {
            progress.close();
            progress = progressOptions.start("reconcile " + merchant, rows, "rows");
        }

        @Override
        public void rowChecked() {
            progress.step();
        }

        @Override
        public void close() {
            progress.close();
        }
    }

    private void print(Report report) throws Exception {
        if (json) {
            System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report));
            return;
        }
        System.out.printf("reconcile %s: %d rows, %d gateway refunds, %d discrepancies, %d left%s%n", report.merchant(), report.rows(),
                report.gatewayRefunds(), report.discrepancies().size(), report.unresolved().size(),
                report.token() == 0 ? "" : " (repaired under token " + report.token() + ")");
        for (Discrepancy d : report.discrepancies()) {
            System.out.printf("  %-20s %-24s %-8s %-10s %s%s%n", d.kind().label(), d.refundId(), d.state() == null ? "-" : d.state(),
                    d.gatewayRefundId() == null ? "-" : d.gatewayRefundId(), d.detail(),
                    d.repairedTo() != null ? "  -> repaired: " + d.repairedTo() : d.kind().repairable() ? "  (--repair fixes it)" : "");
        }
        if (!report.failed().isEmpty()) {
            System.out.printf("  %d failed without a refund at the gateway%s%n", report.failed().size(),
                    failedLeft(report) == 0 ? ": back to pending for the next settle"
                            : ": not paid, they need an operator (--repair --retry-failed sends them again)");
        }
    }
}
