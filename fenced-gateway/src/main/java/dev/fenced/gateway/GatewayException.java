package dev.fenced.gateway;

import dev.fenced.FencedException;

/**
 * A gateway call failed. {@link #retryable()} says whether the same request may be sent again
 * with the same idempotency key: true for timeouts, connection errors and 5xx answers (the refund
 * may or may not exist), false for a 4xx answer (the request itself is wrong).
 */
public class GatewayException extends FencedException {
    private final int status;
    private final boolean retryable;

    public GatewayException(String message, int status, boolean retryable, Throwable cause) {
        super(message, cause);
        this.status = status;
        this.retryable = retryable;
    }

    /** The HTTP status, or 0 when no answer came. */
    public int status() {
        return status;
    }

    public boolean retryable() {
        return retryable;
    }
}
