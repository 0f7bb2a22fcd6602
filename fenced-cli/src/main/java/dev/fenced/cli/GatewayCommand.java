package dev.fenced.cli;

import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import java.math.BigDecimal;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "gateway", mixinStandardHelpOptions = true,
        description = "Run the simulated payment gateway until stopped.")
final class GatewayCommand implements Callable<Integer> {
    @Option(names = "--port", defaultValue = "8080", description = "port on 127.0.0.1, 0 for any (default ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--ledger", description = "file that keeps the ledger across restarts (default: memory only)")
    Path ledger;

    @Option(names = "--latency", defaultValue = "20ms", converter = DurationConverter.class, description = "added to every call (default ${DEFAULT-VALUE})")
    Duration latency;

    @Option(names = "--fail-before", defaultValue = "0", description = "probability of a 503 before creating")
    double failBefore;

    @Option(names = "--fail-after", defaultValue = "0", description = "probability of a 500 after creating")
    double failAfter;

    @Option(names = "--slow", defaultValue = "0", description = "probability of answering only after --slow-delay")
    double slow;

    @Option(names = "--slow-delay", defaultValue = "10s", converter = DurationConverter.class, description = "(default ${DEFAULT-VALUE})")
    Duration slowDelay;

    @Option(names = "--no-idempotency", description = "every POST creates a refund, whatever its key")
    boolean noIdempotency;

    @Option(names = "--seed", defaultValue = "1", description = "seed of the fault draws (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--refuse-above", paramLabel = "AMOUNT",
            description = "refuse (422, nothing created) every refund above this amount (default: none)")
    BigDecimal refuseAbove;

    @Option(names = "--down-for", defaultValue = "0s", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "start in an outage: refuse connections for this long, then listen (default ${DEFAULT-VALUE})")
    Duration downFor;

    @Option(names = "--key-retention", defaultValue = "24h", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "forget each idempotency key this long after its refund; a request that reuses it later makes a new"
                    + " refund, as Stripe's does after 24 h (default ${DEFAULT-VALUE})")
    Duration keyRetention;

    @Option(names = "--rate-limited", defaultValue = "0", description = "probability of a 429 with Retry-After, nothing created")
    double rateLimited;

    @Option(names = "--retry-after", defaultValue = "1s", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "the Retry-After of a 429, in whole seconds (default ${DEFAULT-VALUE})")
    Duration retryAfter;

    @Option(names = "--api-key", paramLabel = "KEY", defaultValue = "${env:FENCED_GATEWAY_API_KEY}",
            description = "require this key as the user of every /refunds request's Basic authorization, 401 otherwise"
                    + " (env FENCED_GATEWAY_API_KEY; a client sends it as http://KEY@host:port)")
    String apiKey;

    @Option(names = "--settle-after", defaultValue = "0s", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "a refund is pending this long after it is made, then final (default ${DEFAULT-VALUE}: at once)")
    Duration settleAfter;

    @Option(names = "--fail-late", defaultValue = "0", description = "share of refunds that end failed after acceptance (money not moved)")
    double failLate;

    @Option(names = "--webhook-url", paramLabel = "URL",
            description = "post each refund's events here, signed (e.g. http://127.0.0.1:8090/webhooks of fenced webhooks)")
    URI webhookUrl;

    @Option(names = "--webhook-secret", paramLabel = "SECRET", defaultValue = "${env:FENCED_GATEWAY_WEBHOOK_SECRET}",
            description = "the secret events are signed with (env FENCED_GATEWAY_WEBHOOK_SECRET); never printed")
    String webhookSecret;

    @Option(names = "--webhook-lost", defaultValue = "0", description = "probability an event is never delivered")
    double webhookLost;

    @Option(names = "--webhook-duplicated", defaultValue = "0", description = "probability an event is delivered twice")
    double webhookDuplicated;

    @Option(names = "--webhook-reordered", defaultValue = "0", description = "probability an event is held back until later ones went")
    double webhookReordered;

    @Override
    public Integer call() throws InterruptedException {
        GatewayConfig config = GatewayConfig.builder().port(port).ledgerFile(ledger).latency(latency)
                .failBefore(failBefore).failAfter(failAfter).slow(slow, slowDelay)
                .idempotency(!noIdempotency).seed(seed).refuseAbove(refuseAbove).downFor(downFor).keyRetention(keyRetention)
                .rateLimited(rateLimited, retryAfter).apiKey(apiKey).lifecycle(settleAfter, failLate)
                .webhooks(webhookUrl, webhookSecret).webhookFaults(webhookLost, webhookDuplicated, webhookReordered).build();
        PaymentGateway gateway = PaymentGateway.start(config);
        Runtime.getRuntime().addShutdownHook(new Thread(gateway::close, "gateway-stop"));
        System.out.println("gateway listening on " + gateway.url() + (noIdempotency ? " (idempotency OFF)" : "")
                + (downFor.isZero() ? "" : " after an outage of " + downFor.toMillis() + " ms")
                + (webhookUrl == null ? "" : ", events to " + webhookUrl));
        System.out.flush();
        new CountDownLatch(1).await();
        return 0;
    }
}
