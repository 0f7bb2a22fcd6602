package dev.fenced.fleet;

import dev.fenced.StoreUnavailableException;
import dev.fenced.internal.Redaction;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;

/**
 * Connections to NATS: {@code nats://[user:password@ | token@]host:port}, or {@code tls://} for TLS
 * (the JVM's trust store), checked before anything connects. Messages name the server by scheme,
 * host and port only: no credential of the URL reaches an error, a log line or an event.
 */
public final class Broker {
    private static final Set<String> SCHEMES = Set.of("nats", "tls");

    private Broker() {
    }

    /** Checks a NATS URL's form; an IllegalArgumentException that never repeats its credentials. */
    public static String requireValidUrl(String url) {
        if (url == null || url.isBlank()) {
            throw new IllegalArgumentException("NATS URL must not be blank");
        }
        URI uri;
        try {
            uri = new URI(url.trim());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("NATS URL " + Redaction.describe(url) + " is malformed: expected nats://[user:password@]host:port");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!SCHEMES.contains(scheme) || uri.getHost() == null || uri.getHost().isBlank() || uri.getPort() > 65535) {
            throw new IllegalArgumentException("NATS URL " + Redaction.describe(url) + " is not nats://[user:password@]host:port or tls://...");
        }
        return url.trim();
    }

    /**
     * Connects, failing within {@code timeout} with a {@link StoreUnavailableException} when the
     * server is unreachable; once connected, the client reconnects on its own for as long as the
     * process runs.
     */
    public static Connection connect(String url, Duration timeout, String connectionName) {
        String checked = requireValidUrl(url);
        Options options = new Options.Builder().server(checked).connectionName(connectionName).connectionTimeout(timeout)
                .maxReconnects(-1).reconnectWait(Duration.ofMillis(250)).noRandomize().errorListener(new QuietErrors()).build();
        try {
            return Nats.connect(options);
        } catch (IOException e) {
            throw new StoreUnavailableException("NATS at " + Redaction.describe(checked) + " is unreachable: "
                    + Redaction.scrub(String.valueOf(e.getMessage()), Redaction.secretsOf(checked)), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted connecting to NATS at " + Redaction.describe(checked), e);
        }
    }

    /** jnats prints every error listener event on stdout by default; the fleet reports its own. */
    private static final class QuietErrors implements io.nats.client.ErrorListener {
    }
}
