package dev.fenced.redis;

import dev.fenced.StoreUnavailableException;

/** Redis refused the credentials it was given. The message never contains the password. */
public class StoreAuthenticationException extends StoreUnavailableException {
    public StoreAuthenticationException(String message, Throwable cause) {
        super(message, cause);
    }
}
