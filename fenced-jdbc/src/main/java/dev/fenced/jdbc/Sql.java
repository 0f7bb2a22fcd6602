package dev.fenced.jdbc;

import java.util.Collections;

/** The fenced statements, built once per table from validated identifiers. */
final class Sql {
    final String claim;
    final String confirm;
    final String readBackPrefix;
    final String claimAllPrefix;

    Sql(FencedTable t) {
        // The claim accepts a row still in the claimed state when its fence is lower: its holder's
        // lease has ended and the new holder may take it over (the article's rule).
        this.claim = "UPDATE " + t.table() + " SET " + t.stateColumn() + " = ?, " + t.fenceColumn() + " = ?"
                + " WHERE " + t.idColumn() + " = ? AND " + t.stateColumn() + " IN (?, ?) AND " + t.fenceColumn() + " < ?";
        // The confirm is stricter, fence = token: only the holder that claimed a row records its result.
        this.confirm = "UPDATE " + t.table() + " SET " + t.stateColumn() + " = ?%s"
                + " WHERE " + t.idColumn() + " = ? AND " + t.stateColumn() + " = ? AND " + t.fenceColumn() + " = ?";
        this.readBackPrefix = "SELECT " + t.idColumn() + ", " + t.stateColumn() + ", " + t.fenceColumn() + " FROM " + t.table()
                + " WHERE " + t.idColumn() + " IN (";
        this.claimAllPrefix = "UPDATE " + t.table() + " SET " + t.stateColumn() + " = ?, " + t.fenceColumn() + " = ?"
                + " WHERE " + t.stateColumn() + " IN (?, ?) AND " + t.fenceColumn() + " < ? AND " + t.idColumn() + " IN (";
    }

    static String placeholders(int n) {
        return String.join(", ", Collections.nCopies(n, "?"));
    }
}
