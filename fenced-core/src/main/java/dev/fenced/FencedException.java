package dev.fenced;

/**
 * Root of every exception fenced throws on purpose. Unchecked: a caller that cannot act on a
 * specific subclass lets it propagate and aborts the batch it was running.
 */
public class FencedException extends RuntimeException {
    public FencedException(String message) {
        super(message);
    }

    public FencedException(String message, Throwable cause) {
        super(message, cause);
    }
}
