package dev.fenced.testing.servers;

import dev.fenced.embedded.EmbeddedEtcd;
import org.junit.jupiter.api.Assumptions;

/**
 * The etcd every test in a JVM shares: the one named by {@code FENCED_ETCD_URL} (comma-separated
 * client URLs), or a real one-member {@code etcd} from the PATH started once for the run. With
 * neither, the calling test is skipped locally and fails in CI ({@code CI=true}), as the NATS tests are.
 */
public final class TestEtcd {
    public static final String ENV = "FENCED_ETCD_URL";
    private static EmbeddedEtcd embedded;

    private TestEtcd() {
    }

    /** The endpoints of the shared test etcd, starting an embedded one on first use. */
    public static synchronized String endpoints() {
        String configured = System.getenv(ENV);
        if (configured != null && !configured.isBlank()) {
            return configured;
        }
        if (embedded == null) {
            requireBinary();
            embedded = EmbeddedEtcd.start();
            Runtime.getRuntime().addShutdownHook(new Thread(embedded::close, "embedded-etcd-stop"));
        }
        return embedded.endpoints();
    }

    /**
     * Returns when an {@code etcd} binary is there for a test that starts its own cluster; otherwise
     * skips the calling test locally and fails it in CI.
     */
    public static void requireBinary() {
        if (EmbeddedEtcd.isAvailable()) {
            return;
        }
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new IllegalStateException("no etcd on the PATH in CI (Debian: apt-get install etcd-server): the etcd tests may not be skipped");
        }
        Assumptions.abort("no " + ENV + " and no etcd on the PATH (Debian: apt-get install etcd-server); etcd tests skipped");
    }
}
