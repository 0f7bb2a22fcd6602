package dev.fenced.testing.servers;

import dev.fenced.embedded.EmbeddedRedis;

/**
 * The Redis every test in a JVM shares: the one named by {@code FENCED_REDIS_URL}, or an embedded
 * real {@code redis-server} started once for the run.
 */
public final class TestRedis {
    public static final String ENV = "FENCED_REDIS_URL";
    private static EmbeddedRedis embedded;

    private TestRedis() {
    }

    /** The URL of the shared test Redis, starting an embedded one on first use. */
    public static synchronized String uri() {
        String configured = System.getenv(ENV);
        if (configured != null && !configured.isBlank()) {
            return configured;
        }
        if (embedded == null) {
            embedded = EmbeddedRedis.start();
            Runtime.getRuntime().addShutdownHook(new Thread(embedded::close, "embedded-redis-stop"));
        }
        return embedded.uri();
    }
}
