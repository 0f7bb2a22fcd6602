package dev.fenced;

/** A store refused the credentials it was given. The message never contains the password. */
public class StoreAuthenticationException extends StoreUnavailableException {
    public StoreAuthenticationException(String message, Throwable cause) {
        super(message, cause);
    }
}
