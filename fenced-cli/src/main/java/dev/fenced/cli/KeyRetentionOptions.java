package dev.fenced.cli;

import dev.fenced.settlement.Reconciliation;
import dev.fenced.settlement.SettlementWorker;
import java.time.Duration;
import picocli.CommandLine.Option;

/** What the provider promises about idempotency keys, for the commands that send or repair refunds ({@code settle}, {@code worker}, {@code reconcile}). */
public final class KeyRetentionOptions {
    @Option(names = "--gateway-key-retention", paramLabel = "DURATION", defaultValue = "24h", converter = DurationConverter.class,
            description = "how long the gateway keeps an idempotency key; a refund first tried longer ago is never sent again,"
                    + " only looked up by reference (default ${DEFAULT-VALUE}, Stripe's)")
    Duration keyRetention;

    @Option(names = "--key-retention-margin", paramLabel = "DURATION", defaultValue = "1h", converter = DurationConverter.class,
            description = "how long before the key retention ends the worker stops trusting a key; one refund's retries must"
                    + " fit in it (default ${DEFAULT-VALUE})")
    Duration keyRetentionMargin;

    /** The key retention on {@code builder}; its {@code build()} refuses retries that could outlive it. */
    SettlementWorker.Builder apply(SettlementWorker.Builder builder) {
        return builder.keyRetention(keyRetention, keyRetentionMargin);
    }

    /** The key retention on {@code reconciliation}, which then tells rows past it from rows the next settle sends. */
    Reconciliation apply(Reconciliation reconciliation) {
        return reconciliation.keyRetention(keyRetention, keyRetentionMargin);
    }
}
