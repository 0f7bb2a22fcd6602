package dev.fenced.cli;

import dev.fenced.gateway.GatewayClient;
import dev.fenced.internal.Durations;
import dev.fenced.settlement.SettlementWorker;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * How a worker calls the gateway, for the commands that send refunds ({@code settle}, {@code worker}):
 * attempts per refund and each call's time limit. With the backoffs, the longest Retry-After honoured
 * (30 s per attempt) and the closing lookup they bound one refund's send, which must fit in the key
 * retention margin ({@link KeyRetentionOptions}): a worker whose retries could outlive it is refused at start.
 */
public final class GatewayCallOptions {
    private static final Duration SHORTEST_TIMEOUT = Duration.ofMillis(100);
    private static final Duration LONGEST_TIMEOUT = Duration.ofMinutes(5);

    @Option(names = "--gateway-attempts", paramLabel = "N", defaultValue = "3",
            description = "requests per refund under its one idempotency key, 1 to 20 (default ${DEFAULT-VALUE})")
    int attempts;

    @Option(names = "--gateway-timeout", paramLabel = "DURATION", defaultValue = "5s", converter = DurationConverter.class,
            description = "how long one gateway call may take before its answer counts as lost, 100ms to 5m; a call in flight"
                    + " when a drain ends is left in sending (default ${DEFAULT-VALUE})")
    Duration timeout;

    /** Checks both before anything connects. */
    void validate() {
        if (attempts < 1 || attempts > 20) {
            throw new UsageException("--gateway-attempts must be 1 to 20, got " + attempts);
        }
        if (timeout.compareTo(SHORTEST_TIMEOUT) < 0 || timeout.compareTo(LONGEST_TIMEOUT) > 0) {
            throw new UsageException("--gateway-timeout must be 100ms to 5m, got " + Durations.human(timeout));
        }
    }

    /** The simulated gateway's client at {@code url}, each call bounded by {@code --gateway-timeout}. */
    GatewayClient client(String url) {
        return Connections.gateway(url, timeout);
    }

    /** The attempts on {@code builder}. */
    SettlementWorker.Builder apply(SettlementWorker.Builder builder) {
        return builder.gatewayAttempts(attempts);
    }
}
