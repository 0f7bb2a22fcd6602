package dev.fenced.cli;

import dev.fenced.fleet.Broker;
import dev.fenced.fleet.JobStream;
import io.nats.client.Connection;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * The broker options of the fleet's commands: where NATS is and which stream holds the jobs.
 * Without a URL, the commands share a local {@code nats-server} ({@link LocalNats}).
 */
public final class NatsOptions {
    @Option(names = "--nats-url", paramLabel = "URL", defaultValue = "${env:FENCED_NATS_URL}",
            description = "NATS with JetStream, nats://[user:password@]host:port or tls://... (env FENCED_NATS_URL);"
                    + " without one, a local nats-server on 127.0.0.1:4222, started from the PATH when none runs")
    public String natsUrl;

    // Lets the tests use a local broker of their own instead of the well-known port.
    @Option(names = "--local-nats-port", hidden = true, defaultValue = "" + LocalNats.DEFAULT_PORT)
    int localPort;

    private String resolved;

    @Option(names = "--stream", defaultValue = "FENCED_SETTLE", description = "the job stream (default ${DEFAULT-VALUE}; dead letters in <stream>_DEAD)")
    public String stream;

    public boolean given() {
        return natsUrl != null && !natsUrl.isBlank();
    }

    /** Checks a given URL's form before anything connects: a malformed one is a usage error. */
    public void checkUrl() {
        if (!given()) {
            return;
        }
        try {
            Broker.requireValidUrl(natsUrl);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /** The given URL, or the local broker's, started if need be. */
    public String url() {
        if (resolved == null) {
            checkUrl();
            resolved = given() ? natsUrl : LocalNats.ensureRunning(localPort);
        }
        return resolved;
    }

    public JobStream.Builder streamBuilder() {
        return JobStream.builder().stream(stream);
    }

    public Connection connect(String name) {
        return Broker.connect(url(), Duration.ofSeconds(5), name);
    }
}
