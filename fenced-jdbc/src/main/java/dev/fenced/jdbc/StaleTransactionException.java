package dev.fenced.jdbc;

import dev.fenced.FenceViolation;

/**
 * A fenced transaction was refused: a newer token has entered the resource's guard row, so this
 * holder is stale. {@link FencedTransactions#enter} has rolled the transaction back before it
 * throws; nothing the transaction wrote commits. Never retry with the same token.
 */
public final class StaleTransactionException extends FenceViolation {
    public StaleTransactionException(String guardTable, String resource, long tokenPresented, long guardFence) {
        super("fenced transaction refused on " + resource + ": token " + tokenPresented + " presented, a newer token (" + guardFence
                + ") has entered " + guardTable + "; the transaction was rolled back", guardTable, resource, tokenPresented, guardFence, null);
    }

    /** The resource whose guard refused the transaction. */
    public String resource() {
        return (String) rowId();
    }
}
