package dev.fenced.jdbc;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Which table holds fenced rows and how its columns and states are named. Immutable; every name is
 * checked as a SQL identifier when the table is built, so nothing from configuration reaches SQL
 * unchecked. State values are bound as parameters.
 *
 * <p>Columns default to {@code id}, {@code state} and {@code fence}. The states have no default: a
 * table knows nothing of what its rows are, so the application names the three a fenced row moves
 * through ({@link Builder#states}: claimable, claimed, done), as the reference worker's refund table
 * names {@code pending}, {@code sending} and {@code sent}. {@link FencedRows} needs them; a table used
 * only for its fences ({@link JdbcFenceFloor}, {@link SchemaCheck}) does not.
 */
public final class FencedTable {
    private final String table;
    private final String idColumn;
    private final String stateColumn;
    private final String fenceColumn;
    private final String scopeColumn;
    private final String pendingState;
    private final String claimedState;
    private final String doneState;

    private FencedTable(Builder b) {
        this.table = SqlIdentifiers.table("table", b.table);
        this.idColumn = SqlIdentifiers.column("id column", b.idColumn);
        this.stateColumn = SqlIdentifiers.column("state column", b.stateColumn);
        this.fenceColumn = SqlIdentifiers.column("fence column", b.fenceColumn);
        this.scopeColumn = b.scopeColumn == null ? null : SqlIdentifiers.column("scope column", b.scopeColumn);
        if (b.statesGiven) {
            this.pendingState = SqlIdentifiers.state("pending state", b.pendingState);
            this.claimedState = SqlIdentifiers.state("claimed state", b.claimedState);
            this.doneState = SqlIdentifiers.state("done state", b.doneState);
            // Case-insensitively, as MariaDB's default collations compare them.
            if (List.of(pendingState, claimedState, doneState).stream().map(String::toLowerCase).distinct().count() != 3) {
                throw new IllegalArgumentException("pending, claimed and done states must differ, got "
                        + pendingState + ", " + claimedState + ", " + doneState);
            }
        } else {
            this.pendingState = null;
            this.claimedState = null;
            this.doneState = null;
        }
        List<String> columns = scopeColumn == null ? List.of(idColumn, stateColumn, fenceColumn)
                : List.of(idColumn, stateColumn, fenceColumn, scopeColumn);
        if (columns.stream().map(String::toLowerCase).distinct().count() != columns.size()) {
            throw new IllegalArgumentException("id, state, fence and scope columns must differ, got " + columns);
        }
    }

    /** Starts a builder for {@code table} with the columns {@code id}, {@code state} and {@code fence}, and no states. */
    public static Builder builder(String table) {
        return new Builder(table);
    }

    public String table() {
        return table;
    }

    public String idColumn() {
        return idColumn;
    }

    public String stateColumn() {
        return stateColumn;
    }

    public String fenceColumn() {
        return fenceColumn;
    }

    /** The column that groups rows under one lease, e.g. {@code merchant}; empty when none. */
    public Optional<String> scopeColumn() {
        return Optional.ofNullable(scopeColumn);
    }

    /** True when the builder was given the states ({@link Builder#states}); {@link FencedRows} requires them. */
    public boolean hasStates() {
        return pendingState != null;
    }

    /** The state a row is claimed from; an IllegalStateException when the table names no states. */
    public String pendingState() {
        return requireStates(pendingState);
    }

    /** The state of a claimed row, in flight; an IllegalStateException when the table names no states. */
    public String claimedState() {
        return requireStates(claimedState);
    }

    /** The state a confirm moves a row to; an IllegalStateException when the table names no states. */
    public String doneState() {
        return requireStates(doneState);
    }

    private String requireStates(String state) {
        if (state == null) {
            throw new IllegalStateException(table + " names no states; give them with FencedTable.Builder.states(pending, claimed, done)");
        }
        return state;
    }

    @Override
    public String toString() {
        return "FencedTable[" + table + " id=" + idColumn + " state=" + stateColumn + " fence=" + fenceColumn
                + (scopeColumn == null ? "" : " scope=" + scopeColumn)
                + (hasStates() ? " " + pendingState + "->" + claimedState + "->" + doneState : "") + "]";
    }

    /** Builds a {@link FencedTable}; {@link #build()} validates every name. */
    public static final class Builder {
        private final String table;
        private String idColumn = "id";
        private String stateColumn = "state";
        private String fenceColumn = "fence";
        private String scopeColumn;
        private boolean statesGiven;
        private String pendingState;
        private String claimedState;
        private String doneState;

        private Builder(String table) {
            this.table = table;
        }

        public Builder idColumn(String idColumn) {
            this.idColumn = idColumn;
            return this;
        }

        public Builder stateColumn(String stateColumn) {
            this.stateColumn = stateColumn;
            return this;
        }

        public Builder fenceColumn(String fenceColumn) {
            this.fenceColumn = fenceColumn;
            return this;
        }

        public Builder scopeColumn(String scopeColumn) {
            this.scopeColumn = Objects.requireNonNull(scopeColumn, "scopeColumn");
            return this;
        }

        /** The state names: claimable, claimed (in flight), done; required by {@link FencedRows}, none by default. */
        public Builder states(String pending, String claimed, String done) {
            this.statesGiven = true;
            this.pendingState = pending;
            this.claimedState = claimed;
            this.doneState = done;
            return this;
        }

        public FencedTable build() {
            return new FencedTable(this);
        }
    }
}
