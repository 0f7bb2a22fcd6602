package dev.fenced.cli;

import dev.fenced.fleet.Broker;
import dev.fenced.fleet.JobStream;
import io.nats.client.Connection;
import java.time.Duration;
import picocli.CommandLine.Option;

/** The broker options of the fleet's commands: where NATS is and which stream holds the jobs. */
public final class NatsOptions {
    @Option(names = "--nats-url", paramLabel = "URL", defaultValue = "${env:FENCED_NATS_URL}",
            description = "NATS with JetStream, nats://[user:password@]host:port or tls://... (env FENCED_NATS_URL)")
    public String natsUrl;

    @Option(names = "--stream", defaultValue = "FENCED_SETTLE", description = "the job stream (default ${DEFAULT-VALUE}; dead letters in <stream>_DEAD)")
    public String stream;

    public boolean given() {
        return natsUrl != null && !natsUrl.isBlank();
    }

    /** Checks the URL's form before anything connects: a malformed one is a usage error. */
    public String requireUrl() {
        String url = Connections.require(natsUrl, "--nats-url", "FENCED_NATS_URL");
        try {
            return Broker.requireValidUrl(url);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    public JobStream.Builder streamBuilder() {
        return JobStream.builder().stream(stream);
    }

    public Connection connect(String name) {
        return Broker.connect(requireUrl(), Duration.ofSeconds(5), name);
    }
}
