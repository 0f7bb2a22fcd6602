package dev.fenced.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundLifecycle;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "poll", mixinStandardHelpOptions = true,
        description = {"Ask the gateway for its final word on a merchant's sent refunds without news: settled, or returned"
                + " (failed or canceled after acceptance: the money did not move).",
                "Exit codes: 0 nothing returned, 7 refunds returned (an operator decides a new attempt, under a new key),"
                        + " 8 sent rows whose refund the gateway does not hold as recorded (see fenced reconcile),"
                        + " 6 some refunds got no answer (asked again next time), 1 runtime failure, 2 usage error."})
final class PollCommand implements Callable<Integer> {
    @Option(names = "--merchant", required = true, description = "merchant id, e.g. m_4471")
    String merchant;

    @Option(names = "--quiet-for", defaultValue = "10m", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "ask only about rows sent at least this long ago without news (default ${DEFAULT-VALUE})")
    Duration quietFor;

    @Mixin
    DatabaseOptions databaseOptions;

    @Mixin
    DatabaseWaitOptions databaseWaits;

    @Mixin
    GatewayOptions gatewayOptions;

    @Override
    public Integer call() {
        Merchants.requireValid(merchant);
        String dbUrl = databaseOptions.requireUrl();
        String gatewayUrl = gatewayOptions.requireUrl();
        RefundLifecycle.Report report;
        try (HikariDataSource db = Connections.database(dbUrl, 2, databaseWaits.resolve(Duration.ofSeconds(30)))) {
            MigrateCommand.requireSchema(db);
            report = RefundLifecycle.of(db, Connections.gateway(gatewayUrl)).poll(merchant, quietFor);
        }
        System.out.println("poll " + merchant + ": " + report.checked() + " checked, " + report.settled().size() + " settled, "
                + report.returned().size() + " returned" + (report.returned().isEmpty() ? "" : " (" + String.join(", ", report.returned()) + ")")
                + ", " + report.stillPending() + " still pending, " + report.unanswered() + " without an answer"
                + (report.missing().isEmpty() ? "" : ", " + report.missing().size() + " not held by the gateway as recorded ("
                + String.join(", ", report.missing().subList(0, Math.min(3, report.missing().size())))
                + (report.missing().size() > 3 ? ", ..." : "") + "; see fenced reconcile)"));
        if (!report.missing().isEmpty()) {
            return ReconcileCommand.DISCREPANCIES;
        }
        if (!report.returned().isEmpty()) {
            return SettleCommand.REJECTED;
        }
        return report.unanswered() > 0 ? SettleCommand.GATEWAY_UNAVAILABLE : 0;
    }
}
