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
 * With {@code key-expiry}, it keeps keys {@link #KEY_RETENTION} rather than a day.
 */
final class ChaosGateway implements AutoCloseable {
    /**
     * How long the gateway keeps a key in a key-expiry run. More than {@link #KEY_RETENTION_MARGIN},
     * which must exceed the workers' longest send: one attempt and a lookup of a second each, and
     * the 30 s of Retry-After a worker may honour ({@code GatewayCalls.longestCreate}).
     */
    static final Duration KEY_RETENTION = Duration.ofSeconds(36);
    /** How long before the retention ends the workers of a key-expiry run stop trusting a key: rows older than 3 s. */
    static final Duration KEY_RETENTION_MARGIN = Duration.ofSeconds(33);

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
        if (settings.faults().contains(Fault.KEY_EXPIRY)) {
            config.keyRetention(KEY_RETENTION);
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

    /** Refund requests carried out and answered 500 while on ({@link PaymentGateway#loseAnswers}). */
    void loseAnswers(boolean lose) {
        current.loseAnswers(lose);
    }

    /** Lookups answered 503 while on, refund requests served ({@link PaymentGateway#lookupsDown}). */
    void lookupsDown(boolean down) {
        current.lookupsDown(down);
    }

    /** The refunds whose answers were lost, by id; a restart forgets them (key-expiry runs without restarts). */
    java.util.Set<String> answersLost() {
        return current.answersLost();
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
        current.loseAnswers(false);
        current.lookupsDown(false);
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
