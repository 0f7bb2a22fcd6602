package dev.fenced.redis;

import dev.fenced.StoreUnavailableException;

/**
 * The TLS handshake with Redis failed: its certificate is not trusted or does not name the host,
 * or it refused this client's certificate. Nothing was acquired or written. The message says which,
 * in one line, without the store's password.
 */
public class StoreTlsException extends StoreUnavailableException {
    public StoreTlsException(String message, Throwable cause) {
        super(message, cause);
    }
}
