package dev.fenced.gateway;

import dev.fenced.provider.MinorUnits;
import dev.fenced.provider.WebhookSignature;
import java.math.BigDecimal;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * How the simulated gateway behaves: its port, ledger file, latency, faults, refusals, an outage
 * at start and whether it honours idempotency keys. Immutable; built by {@link #builder()}, which
 * checks every value in {@link Builder#build()}.
 *
 * <p>Faults are drawn per request from a seeded random source: {@code failBefore} answers 503
 * without creating anything; {@code failAfter} creates the refund and then answers 500, as a
 * gateway that crashed after committing would; {@code slow} creates it and answers only after
 * {@code slowDelay}, past a client's timeout; {@code rateLimited} answers 429 with
 * {@code Retry-After} (seconds) without creating anything. A refusal ({@code refuseAbove}) is not drawn: it is
 * the same answer every time for the same amount.
 *
 * <p>Idempotency keys are kept for {@code keyRetention} (24 hours, as Stripe documents), by the
 * gateway's {@code clock}: after that a key is forgotten, a lookup by it finds nothing and a request
 * that reuses it makes a new refund.
 *
 * <p>With a {@code webhookUrl}, the gateway posts each refund's events there, signed with the
 * {@code webhookSecret} ({@link WebhookSignature}): {@code refund.created} when it is made, with its
 * status then (final already when {@code settleAfter} is zero), and {@code refund.updated} or
 * {@code refund.failed} when a pending refund's status becomes final. Delivery faults are
 * drawn per delivery from the seed: lost (never sent), duplicated (sent twice) and reordered (held
 * back so that later events overtake it).
 */
public final class GatewayConfig {
    /** The largest refund limit: ten digits before the decimal point ({@link MinorUnits#MAX_INTEGER_DIGITS}), two after. */
    static final BigDecimal MAX_AMOUNT = new BigDecimal("9999999999.99");
    /** How long Stripe keeps an idempotency key, and this gateway by default. */
    public static final Duration DEFAULT_KEY_RETENTION = Duration.ofHours(24);

    private final int port;
    private final Path ledgerFile;
    private final Duration latency;
    private final double failBefore;
    private final double failAfter;
    private final double slow;
    private final Duration slowDelay;
    private final boolean idempotency;
    private final long seed;
    private final BigDecimal refuseAbove;
    private final Duration downFor;
    private final Duration keyRetention;
    private final Clock clock;
    private final double rateLimited;
    private final Duration retryAfter;
    private final String apiKey;
    private final Duration settleAfter;
    private final double failLate;
    private final URI webhookUrl;
    private final String webhookSecret;
    private final double webhookLost;
    private final double webhookDuplicated;
    private final double webhookReordered;

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
        this.rateLimited = probability("rate-limited", b.rateLimited);
        if (failBefore + failAfter + slow + rateLimited > 1.0) {
            throw new IllegalArgumentException("fault probabilities add up to more than 1");
        }
        this.slowDelay = nonNegative("slow delay", b.slowDelay);
        this.idempotency = b.idempotency;
        this.seed = b.seed;
        this.refuseAbove = b.refuseAbove == null ? null : refundLimit(b.refuseAbove);
        this.downFor = nonNegative("down-for", b.downFor);
        this.keyRetention = nonNegative("key-retention", b.keyRetention);
        if (keyRetention.isZero()) {
            throw new IllegalArgumentException("key-retention must be positive, got " + keyRetention);
        }
        this.clock = Objects.requireNonNull(b.clock, "clock");
        this.retryAfter = nonNegative("retry-after", b.retryAfter);
        if (b.apiKey != null && !b.apiKey.matches("[A-Za-z0-9_.~-]{1,255}")) {
            // Only characters a URL's user-info carries as they are: a '/' or '@' would move part of the key into the host.
            throw new IllegalArgumentException("api-key must be 1 to 255 of A-Z a-z 0-9 _ . ~ -");
        }
        this.apiKey = b.apiKey;
        this.settleAfter = nonNegative("settle-after", b.settleAfter);
        this.failLate = probability("fail-late", b.failLate);
        this.webhookUrl = b.webhookUrl == null ? null : webhookUrl(b.webhookUrl);
        if (webhookUrl != null) {
            if (b.webhookSecret == null || b.webhookSecret.isBlank()) {
                throw new IllegalArgumentException("webhook-url needs a webhook-secret to sign the events with");
            }
            WebhookSignature.of(List.of(b.webhookSecret)); // refuses a malformed secret without showing it
        }
        this.webhookSecret = b.webhookSecret;
        this.webhookLost = probability("webhook-lost", b.webhookLost);
        this.webhookDuplicated = probability("webhook-duplicated", b.webhookDuplicated);
        this.webhookReordered = probability("webhook-reordered", b.webhookReordered);
        if (webhookLost + webhookDuplicated + webhookReordered > 1.0) {
            throw new IllegalArgumentException("webhook fault probabilities add up to more than 1");
        }
    }

    private static URI webhookUrl(URI url) {
        if (!("http".equals(url.getScheme()) || "https".equals(url.getScheme())) || url.getHost() == null || url.getRawUserInfo() != null) {
            throw new IllegalArgumentException("webhook-url must be an http or https URL with a host and no user-info");
        }
        return url;
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

    /** Refunds above this amount are refused (422) and never created; null refuses none. */
    public BigDecimal refuseAbove() {
        return refuseAbove;
    }

    /** How long the gateway stays down after it starts (its port is chosen, then refuses connections). */
    public Duration downFor() {
        return downFor;
    }

    /** The probability of a 429 with {@link #retryAfter()}, nothing created. */
    public double rateLimited() {
        return rateLimited;
    }

    /** The {@code Retry-After} a 429 carries, in whole seconds (rounded up). */
    public Duration retryAfter() {
        return retryAfter;
    }

    /**
     * The key every {@code /refunds} request must carry as the user of its Basic authorization (as
     * Stripe takes its secret key); null lets every request in. Never printed.
     */
    String apiKey() {
        return apiKey;
    }

    /** How long a refund stays {@code pending} before its final status; zero (the default): final at once. */
    public Duration settleAfter() {
        return settleAfter;
    }

    /** The share of refunds whose final status is {@code failed} after acceptance (drawn per refund id, the same every time). */
    public double failLate() {
        return failLate;
    }

    /** Where refund events are posted; null (the default) sends none. */
    public URI webhookUrl() {
        return webhookUrl;
    }

    /** The secret events are signed with; never printed. */
    String webhookSecret() {
        return webhookSecret;
    }

    /** The share of event deliveries never sent. */
    public double webhookLost() {
        return webhookLost;
    }

    /** The share of event deliveries sent twice. */
    public double webhookDuplicated() {
        return webhookDuplicated;
    }

    /** The share of event deliveries held back until later events have gone. */
    public double webhookReordered() {
        return webhookReordered;
    }

    /** How long an idempotency key is remembered after the refund it made; 24 hours by default. */
    public Duration keyRetention() {
        return keyRetention;
    }

    /** The clock of the refunds' creation times and of the keys' retention; the system's by default. */
    public Clock clock() {
        return clock;
    }

    /**
     * Whether {@code amount} fits a refund: positive, at most two decimals, at most
     * {@link #MAX_AMOUNT}. Checked on precision and scale alone, so it is cheap for any input:
     * {@code setScale} or {@code toPlainString} on {@code 1e100000} would build a 100,000-digit number.
     */
    static boolean isValidAmount(BigDecimal amount) {
        return amount.signum() > 0
                && amount.precision() - amount.scale() <= MAX_AMOUNT.precision() - MAX_AMOUNT.scale()
                && amount.stripTrailingZeros().scale() <= MAX_AMOUNT.scale();
    }

    private static BigDecimal refundLimit(BigDecimal limit) {
        if (!isValidAmount(limit)) {
            throw new IllegalArgumentException("refuse-above must be a positive amount with at most two decimals, at most "
                    + MAX_AMOUNT.toPlainString() + ", got " + limit);
        }
        return limit.setScale(MAX_AMOUNT.scale());
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

    /**
     * Builds a {@link GatewayConfig}: port 0 (any free), in-memory ledger, 20 ms latency, no faults,
     * no refusals, up at once, keys kept 24 hours by the system clock.
     */
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
        private BigDecimal refuseAbove;
        private Duration downFor = Duration.ZERO;
        private Duration keyRetention = DEFAULT_KEY_RETENTION;
        private Clock clock = Clock.systemUTC();
        private double rateLimited;
        private Duration retryAfter = Duration.ofSeconds(1);
        private String apiKey;
        private Duration settleAfter = Duration.ZERO;
        private double failLate;
        private URI webhookUrl;
        private String webhookSecret;
        private double webhookLost;
        private double webhookDuplicated;
        private double webhookReordered;

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

        /** Refuses every refund above {@code limit}; null (the default) refuses none. */
        public Builder refuseAbove(BigDecimal limit) {
            this.refuseAbove = limit;
            return this;
        }

        /** Starts the gateway in an outage of this length; zero (the default) starts it up. */
        public Builder downFor(Duration downFor) {
            this.downFor = downFor;
            return this;
        }

        /**
         * Refunds stay {@code pending} for {@code settleAfter} after they are made, then become
         * {@code succeeded}, or {@code failed} for a share {@code failLate} of them (the money did
         * not move), as a provider's refunds settle after acceptance. Zero and none by default.
         */
        public Builder lifecycle(Duration settleAfter, double failLate) {
            this.settleAfter = settleAfter;
            this.failLate = failLate;
            return this;
        }

        /** Posts refund events to {@code url}, signed with {@code secret}; a null URL (the default) sends none. */
        public Builder webhooks(URI url, String secret) {
            this.webhookUrl = url;
            this.webhookSecret = secret;
            return this;
        }

        /** Loses, duplicates and reorders these shares of event deliveries; none by default. */
        public Builder webhookFaults(double lost, double duplicated, double reordered) {
            this.webhookLost = lost;
            this.webhookDuplicated = duplicated;
            this.webhookReordered = reordered;
            return this;
        }

        /** Answers this share of refund requests 429 with {@code Retry-After: retryAfter}, creating nothing. */
        public Builder rateLimited(double probability, Duration retryAfter) {
            this.rateLimited = probability;
            this.retryAfter = retryAfter;
            return this;
        }

        /** Requires {@code apiKey} as the Basic authorization's user on every {@code /refunds} request (401 otherwise). */
        public Builder apiKey(String apiKey) {
            this.apiKey = apiKey;
            return this;
        }

        /** Forgets each idempotency key this long after its refund was made; 24 hours (Stripe's) by default. */
        public Builder keyRetention(Duration keyRetention) {
            this.keyRetention = keyRetention;
            return this;
        }

        /** The clock that stamps refunds and ages keys: a test moves it to make a key expire without waiting. */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** @throws IllegalArgumentException for a value out of range, with the option's name */
        public GatewayConfig build() {
            return new GatewayConfig(this);
        }
    }
}
