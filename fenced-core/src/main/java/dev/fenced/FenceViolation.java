package dev.fenced;

/**
 * A fenced write was refused because the row carries a fence its token does not satisfy: another
 * holder with a higher token owns the row now, or the row is no longer in the state the write
 * expects.
 *
 * <p>This is the one exception that means "you are not the holder any more". The only correct
 * reaction is to abandon the batch: never retry the write, never claim another row with the same
 * token.
 */
public class FenceViolation extends FencedException {
    private final String table;
    private final Object rowId;
    private final long tokenPresented;
    private final Long storedFence;
    private final String storedState;

    public FenceViolation(String table, Object rowId, long tokenPresented, Long storedFence, String storedState) {
        this("fenced write refused on " + table + " row " + rowId + ": token " + tokenPresented
                + " presented, row holds fence " + storedFence + " in state '" + storedState + "'",
                table, rowId, tokenPresented, storedFence, storedState);
    }

    /** For a subclass that words the refusal its own way. */
    protected FenceViolation(String message, String table, Object rowId, long tokenPresented, Long storedFence, String storedState) {
        super(message);
        this.table = table;
        this.rowId = rowId;
        this.tokenPresented = tokenPresented;
        this.storedFence = storedFence;
        this.storedState = storedState;
    }

    /** The table the refused write was aimed at. */
    public String table() {
        return table;
    }

    /** The id of the row that refused the write. */
    public Object rowId() {
        return rowId;
    }

    /** The token the refused writer presented. */
    public long tokenPresented() {
        return tokenPresented;
    }

    /** The fence the row held when the refusal was read back; null if it could not be read. */
    public Long storedFence() {
        return storedFence;
    }

    /** The state the row held when the refusal was read back; null if it could not be read. */
    public String storedState() {
        return storedState;
    }
}
