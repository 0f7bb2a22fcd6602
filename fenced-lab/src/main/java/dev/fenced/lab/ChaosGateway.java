package dev.fenced.lab;

import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.gateway.WebhookStats;
import dev.fenced.provider.GatewayRefund;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The chaos run's payment gateway, which a fault may restart: it comes back on the same port with
 * the same ledger file, so workers keep their URL and the checker sees every refund ever created.
 * With the {@code gateway} fault, a fraction of requests fail before or after the refund, or hang.
 */
final class ChaosGateway implements AutoCloseable {
    private final GatewayConfig config;
    private volatile PaymentGateway current;
    private volatile WebhookStats beforeRestarts = new WebhookStats(0, 0, 0, 0, 0, 0, 0);

    private ChaosGateway(GatewayConfig config, PaymentGateway first) {
        this.config = config;
        this.current = first;
    }

    /** @param news where the gateway's webhooks go with {@link Fault#PROVIDER_NEWS}; null without it */
    static ChaosGateway start(ChaosSettings settings, Path ledger, URI news) {
        PaymentGateway first = PaymentGateway.start(config(settings, 0, ledger, news));
        return new ChaosGateway(config(settings, first.port(), ledger, news), first);
    }

    private static GatewayConfig config(ChaosSettings settings, int port, Path ledger, URI news) {
        GatewayConfig.Builder config = GatewayConfig.builder().port(port).ledgerFile(ledger).latency(settings.gatewayLatency())
                .seed(settings.seed());
        if (settings.faults().contains(Fault.GATEWAY)) {
            config.failBefore(0.04).failAfter(0.04).slow(0.01, Duration.ofSeconds(7)); // the client gives up after 5 s
        }
        if (news != null) {
            config.lifecycle(LabWebhooks.SETTLE_AFTER, LabWebhooks.FAIL_LATE).webhooks(news, LabWebhooks.SECRET)
                    .webhookFaults(LabWebhooks.DELIVERY_FAULTS, LabWebhooks.DELIVERY_FAULTS, LabWebhooks.DELIVERY_FAULTS);
        }
        return config.build();
    }

    /** What the webhook sender did, over every restart: a restart loses the events still waiting, as a lost delivery would. */
    WebhookStats webhookStats() {
        WebhookStats now = current.webhookStats();
        WebhookStats before = beforeRestarts;
        return new WebhookStats(before.delivered() + now.delivered(), before.lost() + now.lost(), before.duplicated() + now.duplicated(),
                before.reordered() + now.reordered(), before.refusedDeliveries() + now.refusedDeliveries(), before.givenUp() + now.givenUp(),
                now.waiting());
    }

    String url() {
        return current.url();
    }

    boolean listening() {
        return current.listening();
    }

    void outage(Duration length) {
        current.outage(length);
    }

    /** In-flight answers are lost; the ledger on disk is what it comes back with. */
    void restart() {
        current.close(); // first: what it delivered up to its last moment is counted
        WebhookStats stats = webhookStats();
        beforeRestarts = new WebhookStats(stats.delivered(), stats.lost(), stats.duplicated(), stats.reordered(), stats.refusedDeliveries(),
                stats.givenUp(), 0);
        current = PaymentGateway.start(config);
    }

    /** Ends the per-request faults and waits out an outage the schedule started, so that the drain runs against a listening gateway. */
    void heal() {
        current.faultsEnabled(false);
        long deadline = System.currentTimeMillis() + 30_000;
        while (!current.listening() && System.currentTimeMillis() < deadline) {
            WorkerProcess.sleep(20);
        }
    }

    List<GatewayRefund> ledger() {
        return current.ledger();
    }

    @Override
    public void close() {
        current.close();
    }
}
