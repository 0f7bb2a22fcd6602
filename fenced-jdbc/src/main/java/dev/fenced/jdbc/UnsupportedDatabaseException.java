package dev.fenced.jdbc;

import dev.fenced.FencedException;

/**
 * The DataSource reaches a database fenced cannot fence: only PostgreSQL and MariaDB are supported.
 * MySQL has no sequences (fenced's tokens, epochs and leases draw from them), H2 and others were
 * never tested. A configuration to change, not a failure to retry.
 */
public final class UnsupportedDatabaseException extends FencedException {
    private final String product;

    public UnsupportedDatabaseException(String product, String reason) {
        super("unsupported database '" + product + "': " + reason);
        this.product = product;
    }

    /** The product and version the driver reported, e.g. {@code MySQL 8.0.36}. */
    public String product() {
        return product;
    }
}
