package dev.fenced.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.fleet.SettlementJobs;
import dev.fenced.provider.MinorUnits;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSeeder;
import java.math.BigDecimal;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "seed", mixinStandardHelpOptions = true,
        description = "Insert a merchant's pending refunds, with deterministic amounts that sum exactly to the total.")
final class SeedCommand implements Callable<Integer> {
    @Option(names = "--merchant", required = true, description = "merchant id, e.g. m_4471")
    String merchant;

    @Option(names = "--refunds", required = true, description = "how many refunds")
    int refunds;

    @Option(names = "--total", required = true, description = "their total, with at most the currency's decimals (EUR 2, JPY 0, KWD 3), e.g. 84300.00")
    String total;

    @Option(names = "--currency", defaultValue = "EUR", description = "ISO 4217 currency code with minor units (default ${DEFAULT-VALUE})")
    String currency;

    @Option(names = "--id-prefix", description = "refund id prefix (default: the merchant id and _r, e.g. m_4471_r001)")
    String idPrefix;

    @Option(names = "--enqueue", description = "also publish the merchant's settlement job to the fleet's stream (the broker of --nats-url, or the local one)")
    boolean enqueue;

    @Mixin
    DatabaseOptions databaseOptions;

    @Mixin
    NatsOptions nats;

    @Mixin
    ProgressOptions progressOptions;

    @Override
    public Integer call() {
        Merchants.requireValid(merchant);
        BigDecimal amount;
        try {
            amount = new BigDecimal(total);
        } catch (NumberFormatException e) {
            throw new UsageException("--total '" + total + "' is not a decimal number");
        }
        RefundSeeder.amounts(refunds, amount, currency); // every input is checked before anything is written
        if (idPrefix == null) {
            idPrefix = merchant + "_r"; // never collides with another merchant seeded the same way
        }
        String url = databaseOptions.requireUrl();
        // With --enqueue, the broker is reached first: an unreachable one stops the command before a row is written.
        try (io.nats.client.Connection broker = enqueue ? nats.connect("fenced-seed") : null) {
            SettlementJobs jobs = broker == null ? null : SettlementJobs.on(broker, nats.streamBuilder().build());
            try (HikariDataSource db = Connections.database(url, 2);
                 Progress progress = progressOptions.start("seed " + merchant, refunds, "refunds inserted")) {
                try {
                    RefundSeeder.seed(db, merchant, idPrefix, refunds, amount, currency, progress::stepBy);
                } catch (IllegalStateException e) {
                    throw new UsageException(e.getMessage());
                }
            }
            BigDecimal written = amount.setScale(MinorUnits.digits(currency)); // exact: the split refused more decimals
            System.out.println("seeded " + merchant + ": " + refunds + " refunds, " + written.toPlainString() + " " + currency);
            if (jobs != null) {
                System.out.println(EnqueueCommand.describe(jobs.enqueue(merchant)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return FencedCli.RUNTIME_FAILURE;
        }
        return 0;
    }
}
