package dev.fenced.lab;

import dev.fenced.embedded.EmbeddedNats;
import dev.fenced.fleet.Broker;
import io.nats.client.Connection;
import java.time.Duration;

/**
 * The chaos run's NATS with JetStream: the server {@link ChaosSettings#natsUrl()} names, or a
 * {@code nats-server} of the run's own (always with {@link Fault#NATS_RESTART}, which restarts it
 * on its file storage), and the harness's own connection, which reconnects on its own as the
 * workers' do. A shared server is only used: the run touches nothing on it but its own streams.
 */
final class ChaosBroker implements AutoCloseable {
    private final EmbeddedNats embedded;
    private final String url;
    private final Connection connection;

    private ChaosBroker(EmbeddedNats embedded, String url, Connection connection) {
        this.embedded = embedded;
        this.url = url;
        this.connection = connection;
    }

    static ChaosBroker start(ChaosSettings settings) {
        EmbeddedNats embedded = settings.ownsBroker() ? EmbeddedNats.start() : null;
        String url = embedded != null ? embedded.url() : settings.natsUrl();
        try {
            return new ChaosBroker(embedded, url, Broker.connect(url, Duration.ofSeconds(5), "fenced-chaos"));
        } catch (RuntimeException e) {
            if (embedded != null) {
                embedded.close();
            }
            throw e;
        }
    }

    String url() {
        return url;
    }

    Connection connection() {
        return connection;
    }

    /** How the report names the broker. */
    String describe() {
        return embedded != null ? "a nats-server of the run's own" : "the NATS of --nats-url / FENCED_NATS_URL";
    }

    /** Stops the run's own server and starts it again on the same port and file storage: no stored job may be lost. */
    void restart() {
        if (embedded == null) {
            throw new IllegalStateException("nats-restart needs a nats-server of the run's own");
        }
        embedded.restart();
    }

    @Override
    public void close() {
        try {
            connection.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }
}
