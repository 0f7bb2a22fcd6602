package dev.fenced.jdbc;

import dev.fenced.StoreUnavailableException;

/**
 * The database granted a lease but warned while doing so, so the grant is not used: above all, a
 * commit whose wait for a synchronous standby was cancelled (by the statement's own query timeout)
 * is reported as made although it "might not have been replicated", and a failover could then lose
 * it and hand its token out again. No token is returned; the lease row, if it stays, ends by its
 * TTL. Safe to retry.
 */
public class GrantInDoubtException extends StoreUnavailableException {
    public GrantInDoubtException(String message) {
        super(message, null);
    }

    /**
     * Throws when {@code statement} came back with a warning: {@code what} ("the lease on r was
     * granted", "a token for r from s came") and why it is not used open the message, the server's
     * warning ends it.
     */
    static void requireNoWarning(java.sql.Statement statement, String what, String whyNotUsed) throws java.sql.SQLException {
        java.sql.SQLWarning warning = statement.getWarnings();
        if (warning != null) {
            throw new GrantInDoubtException(what + " with a warning from the server, so it is not used" + whyNotUsed + ": "
                    + warning.getMessage());
        }
    }
}
