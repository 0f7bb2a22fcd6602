package dev.fenced.gateway;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * How the simulated gateway behaves: its port, ledger file, latency, faults and whether it honours
 * idempotency keys. Immutable; built by {@link #builder()}.
 *
 * <p>Faults are drawn per request from a seeded random source: {@code failBefore} answers 503
 * without creating anything; {@code failAfter} creates the refund and then answers 500, as a
 * gateway that crashed after committing would; {@code slow} creates it and answers only after
 * {@code slowDelay}, past a client's timeout.
 */
public final class GatewayConfig {
    private final int port;
    private final Path ledgerFile;
    private final Duration latency;
    private final double failBefore;
    private final double failAfter;
    private final double slow;
    private final Duration slowDelay;
    private final boolean idempotency;
    private final long seed;

    private GatewayConfig(Builder b) {
        if (b.port < 0 || b.port > 65535) {
            throw new IllegalArgumentException("port must be 0 to 65535, got " + b.port);
        }
        this.port = b.port;
        this.ledgerFile = b.ledgerFile;
        this.latency = nonNegative("latency", b.latency);
        this.failBefore = probability("fail-before", b.failBefore);
        this.failAfter = probability("fail-after", b.failAfter);
        this.slow = probability("slow", b.slow);
        if (failBefore + failAfter + slow > 1.0) {
            throw new IllegalArgumentException("fault probabilities add up to more than 1");
        }
        this.slowDelay = nonNegative("slow delay", b.slowDelay);
        this.idempotency = b.idempotency;
        this.seed = b.seed;
    }

    public static Builder builder() {
        return new Builder();
    }

    public int port() {
        return port;
    }

    /** Where the ledger is kept across restarts; null keeps it in memory only. */
    public Path ledgerFile() {
        return ledgerFile;
    }

    public Duration latency() {
        return latency;
    }

    public double failBefore() {
        return failBefore;
    }

    public double failAfter() {
        return failAfter;
    }

    public double slow() {
        return slow;
    }

    public Duration slowDelay() {
        return slowDelay;
    }

    /** False for the comparison's broken gateway: every POST creates a refund. */
    public boolean idempotency() {
        return idempotency;
    }

    public long seed() {
        return seed;
    }

    private static Duration nonNegative(String what, Duration d) {
        Objects.requireNonNull(d, what);
        if (d.isNegative()) {
            throw new IllegalArgumentException(what + " must not be negative, got " + d);
        }
        return d;
    }

    private static double probability(String what, double p) {
        if (!(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException(what + " probability must be between 0 and 1, got " + p);
        }
        return p;
    }

    /** Builds a {@link GatewayConfig}: port 0 (any free), in-memory ledger, 20 ms latency, no faults. */
    public static final class Builder {
        private int port;
        private Path ledgerFile;
        private Duration latency = Duration.ofMillis(20);
        private double failBefore;
        private double failAfter;
        private double slow;
        private Duration slowDelay = Duration.ofSeconds(10);
        private boolean idempotency = true;
        private long seed = 1;

        public Builder port(int port) {
            this.port = port;
            return this;
        }

        public Builder ledgerFile(Path ledgerFile) {
            this.ledgerFile = ledgerFile;
            return this;
        }

        public Builder latency(Duration latency) {
            this.latency = latency;
            return this;
        }

        public Builder failBefore(double probability) {
            this.failBefore = probability;
            return this;
        }

        public Builder failAfter(double probability) {
            this.failAfter = probability;
            return this;
        }

        public Builder slow(double probability, Duration delay) {
            this.slow = probability;
            this.slowDelay = delay;
            return this;
        }

        public Builder idempotency(boolean idempotency) {
            this.idempotency = idempotency;
            return this;
        }

        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        public GatewayConfig build() {
            return new GatewayConfig(this);
        }
    }
}
