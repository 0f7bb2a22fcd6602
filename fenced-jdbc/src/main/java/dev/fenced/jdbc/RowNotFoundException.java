package dev.fenced.jdbc;

import dev.fenced.FencedException;

/** A fenced write named a row that does not exist. Not a fence violation: nobody else owns it. */
public class RowNotFoundException extends FencedException {
    private final String table;
    private final Object rowId;

    public RowNotFoundException(String table, Object rowId) {
        super("no row " + rowId + " in " + table);
        this.table = table;
        this.rowId = rowId;
    }

    public String table() {
        return table;
    }

    public Object rowId() {
        return rowId;
    }
}
