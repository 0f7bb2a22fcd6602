package dev.fenced;

/**
 * A store (Redis, the database) could not be reached or refused the connection. The message names
 * the store with any password removed. Nothing was acquired or written.
 */
public class StoreUnavailableException extends FencedException {
    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
