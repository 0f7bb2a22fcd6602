package dev.fenced.testing;

import dev.fenced.embedded.EmbeddedNats;

/**
 * The NATS with JetStream every test in a JVM shares: the one named by {@code FENCED_NATS_URL}, or
 * a real {@code nats-server} from the PATH started once for the run.
 */
public final class TestNats {
    public static final String ENV = "FENCED_NATS_URL";
    private static EmbeddedNats embedded;

    private TestNats() {
    }

    /** The URL of the shared test NATS, starting an embedded one on first use. */
    public static synchronized String url() {
        String configured = System.getenv(ENV);
        if (configured != null && !configured.isBlank()) {
            return configured;
        }
        if (embedded == null) {
            embedded = EmbeddedNats.start();
            Runtime.getRuntime().addShutdownHook(new Thread(embedded::close, "embedded-nats-stop"));
        }
        return embedded.url();
    }
}
