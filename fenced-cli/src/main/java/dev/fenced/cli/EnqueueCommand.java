package dev.fenced.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.fleet.SettlementJobs;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSummary;
import io.nats.client.Connection;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "enqueue", mixinStandardHelpOptions = true,
        description = {"Publish the settlement job of a merchant to the fleet's JetStream stream.",
                "The same job enqueued twice within the de-duplication window (2 minutes) is one job. With a database (--db-url or"
                        + " FENCED_DB_URL), a merchant without refunds is refused before anything is published (exit 12); a worker"
                        + " dead-letters such a job."})
final class EnqueueCommand implements Callable<Integer> {
    @Option(names = "--merchant", required = true, description = "merchant id, e.g. m_4471")
    String merchant;

    @Option(names = "--batch", description = "a batch id, to enqueue a job distinct from the merchant's earlier ones")
    String batch;

    @Mixin
    NatsOptions nats;

    /** Optional: with it, a merchant without refunds is refused before anything is published. */
    @Mixin
    DatabaseOptions databaseOptions;

    @Override
    public Integer call() throws InterruptedException {
        Merchants.requireValid(merchant);
        SettlementJobs.requireValidBatchId(batch);
        nats.checkUrl();
        String dbUrl = databaseOptions.dbUrl;
        if (dbUrl != null && !dbUrl.isBlank()) {
            try (HikariDataSource db = Connections.readOnlyDatabase(dbUrl, 1)) {
                if (!RefundSummary.exists(db, merchant)) {
                    System.err.println("fenced enqueue: merchant " + merchant + " has no refunds at all (a mistyped id? 'fenced status --all'"
                            + " lists the merchants); nothing enqueued");
                    return SettleCommand.NO_REFUNDS;
                }
            }
        }
        try (Connection broker = nats.connect("fenced-enqueue")) {
            System.out.println(describe(SettlementJobs.on(broker, nats.streamBuilder().build()).enqueue(merchant, batch)));
        }
        return 0;
    }

    static String describe(SettlementJobs.Enqueued job) {
        return job.duplicate()
                ? job.merchant() + ": already enqueued as job " + job.sequence() + " (one job: de-duplicated)"
                : "enqueued " + job.merchant() + " as job " + job.sequence();
    }
}
