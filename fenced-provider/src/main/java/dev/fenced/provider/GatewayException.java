package dev.fenced.provider;

import dev.fenced.FencedException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A gateway call that did not return a refund, classified by what it means for the money
 * ({@link Outcome}). The class is decided in one place, {@code GatewayClient} (fenced-gateway): a caller switches
 * on {@link #outcome()} and never reads status codes itself.
 *
 * <p>Messages name the gateway by scheme, host and port only, and carry the gateway's own reason:
 * no URL user-info, no configuration.
 */
public class GatewayException extends FencedException {
    /** What a failed call says about the refund it was about. */
    public enum Outcome {
        /**
         * A definitive business refusal (400, 409 key reused with other parameters, 413, 422): the
         * refund was not made and sending it again will not change that. The only outcome that may
         * mark a refund failed.
         */
        REJECTED,
        /**
         * The request may have reached the gateway (a timeout after sending, a connection reset, a
         * 5xx, a 408): the refund may or may not exist. Resolved only by a lookup with the same key.
         */
        UNKNOWN,
        /**
         * The request did not leave, or was turned away before any processing (connection refused,
         * connect timeout, 401, 403, 404, 405, 429): nothing was made; try again later.
         */
        UNAVAILABLE
    }

    private final int status;
    private final Outcome outcome;
    private final Duration retryAfter;

    public GatewayException(String message, int status, Outcome outcome, Throwable cause) {
        this(message, status, outcome, null, cause);
    }

    /** With the wait the gateway asked for before the next request ({@code Retry-After}); null when it asked none. */
    public GatewayException(String message, int status, Outcome outcome, Duration retryAfter, Throwable cause) {
        super(message, cause);
        this.status = status;
        this.outcome = Objects.requireNonNull(outcome, "outcome");
        this.retryAfter = retryAfter;
    }

    /** How long the gateway asked callers to wait before the next request (a 429's or 503's {@code Retry-After}). */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }

    /**
     * The gateway refused the caller's credentials (401, 403): nothing was made, and nothing will be
     * until someone fixes the configuration, so a caller stops rather than retries.
     */
    public boolean credentialsRefused() {
        return status == 401 || status == 403;
    }

    /** The HTTP status, or 0 when no answer came. */
    public int status() {
        return status;
    }

    public Outcome outcome() {
        return outcome;
    }

    /** Whether the same request may be sent again with the same idempotency key: every outcome but {@link Outcome#REJECTED}. */
    public boolean retryable() {
        return outcome != Outcome.REJECTED;
    }

    /** The outcome of an HTTP status that is not a success. */
    public static Outcome classify(int status) {
        return switch (status) {
            case 400, 409, 413, 422 -> Outcome.REJECTED;
            case 408 -> Outcome.UNKNOWN;
            default -> status >= 500 ? Outcome.UNKNOWN : Outcome.UNAVAILABLE;
        };
    }
}
