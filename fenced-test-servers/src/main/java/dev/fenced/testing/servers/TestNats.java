package dev.fenced.testing.servers;

import dev.fenced.embedded.EmbeddedNats;
import org.junit.jupiter.api.Assumptions;

/**
 * The NATS with JetStream every test in a JVM shares: the one named by {@code FENCED_NATS_URL}, or
 * a real {@code nats-server} from the PATH started once for the run. With neither, the calling
 * test is skipped locally and fails in CI ({@code CI=true}), as the MariaDB tests are.
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
            if (!EmbeddedNats.isAvailable()) {
                if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                    throw new IllegalStateException(ENV + " must be set in CI: the fleet's tests may not be skipped");
                }
                Assumptions.abort("no " + ENV + " and no nats-server on the PATH (Debian: apt-get install nats-server); fleet tests skipped");
            }
            embedded = EmbeddedNats.start();
            Runtime.getRuntime().addShutdownHook(new Thread(embedded::close, "embedded-nats-stop"));
        }
        return embedded.url();
    }
}
