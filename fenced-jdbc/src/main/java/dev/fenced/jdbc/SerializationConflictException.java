package dev.fenced.jdbc;

import dev.fenced.FenceViolation;
import dev.fenced.FencedException;

/**
 * The database aborted a fenced write's transaction because of a concurrent transaction
 * (SQLSTATE 40001 or 40P01, MariaDB error 1020 or 1213). Unlike a {@link FenceViolation} it says
 * nothing about who owns the row: the whole transaction may be retried with the same token.
 */
public class SerializationConflictException extends FencedException {
    private final String sqlState;
    private final int vendorCode;

    public SerializationConflictException(String message, String sqlState, int vendorCode, Throwable cause) {
        super(message + " (SQLSTATE " + sqlState + ", vendor code " + vendorCode + "): retry the transaction", cause);
        this.sqlState = sqlState;
        this.vendorCode = vendorCode;
    }

    public String sqlState() {
        return sqlState;
    }

    public int vendorCode() {
        return vendorCode;
    }
}
