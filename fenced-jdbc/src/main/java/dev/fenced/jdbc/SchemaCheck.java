package dev.fenced.jdbc;

import dev.fenced.StoreUnavailableException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;

/**
 * Checks that the tables fencing relies on have the shape it needs, from the database's own
 * metadata: a {@link FencedTable}'s fence column exists and is {@code BIGINT NOT NULL}, its id
 * column exists and is unique (alone, or with the scope column), its state column exists; the
 * counter ({@value FencedSchema#COUNTER_TABLE}) and guard ({@value FencedSchema#GUARD_TABLE})
 * tables exist with a unique {@code resource} and a {@code BIGINT NOT NULL} value. Each problem is
 * one readable line.
 *
 * <p>Why: a nullable fence column makes {@code fence < token} unknown for a NULL row, and every
 * claim of it is refused with a misleading "fence null"; an id that is not unique lets one claim
 * take two rows. {@link FencedRows} runs the check for its table on its first write; the command
 * line runs it as {@code fenced doctor}. Read-only.
 */
public final class SchemaCheck {
    /** One thing wrong with the schema. */
    public record Problem(String table, String column, String message) {
        @Override
        public String toString() {
            return table + (column == null ? "" : "." + column) + ": " + message;
        }
    }

    private SchemaCheck() {
    }

    /** The problems of a fenced table; none when it is fit. */
    public static List<Problem> check(Connection connection, FencedTable table) throws SQLException {
        List<Problem> problems = new ArrayList<>();
        Map<String, Column> columns = columns(connection, table.table());
        if (columns.isEmpty()) {
            problems.add(new Problem(table.table(), null, "no such table"));
            return problems;
        }
        requireBigintNotNull(problems, table.table(), columns, table.fenceColumn(), "the fence column");
        requirePresent(problems, table.table(), columns, table.stateColumn(), "the state column");
        if (requirePresent(problems, table.table(), columns, table.idColumn(), "the id column")) {
            Set<String> allowed = new HashSet<>(List.of(key(table.idColumn())));
            table.scopeColumn().ifPresent(scope -> allowed.add(key(scope)));
            if (!uniquelyIndexed(connection, table.table(), key(table.idColumn()), allowed)) {
                problems.add(new Problem(table.table(), table.idColumn(), "is not unique: make it the primary key or give it a unique index"
                        + table.scopeColumn().map(scope -> " (alone, or with " + scope + ")").orElse("")
                        + "; otherwise one claim can take two rows"));
            }
        }
        return problems;
    }

    /** The problems of the library's own tables: the token counter and the guard rows. */
    public static List<Problem> checkLibraryTables(Connection connection) throws SQLException {
        List<Problem> problems = new ArrayList<>();
        resourceTable(connection, problems, FencedSchema.COUNTER_TABLE, "value", "JdbcTokenSource");
        resourceTable(connection, problems, FencedSchema.GUARD_TABLE, "fence", "FencedTransactions");
        return problems;
    }

    /**
     * Checks a fenced table over a connection of {@code dataSource}.
     *
     * @throws SchemaProblemException listing every problem, when there is one
     */
    public static void require(DataSource dataSource, FencedTable table) {
        try (Connection connection = dataSource.getConnection()) {
            require(connection, table);
        } catch (SQLException e) {
            throw new StoreUnavailableException("could not read the schema of " + table.table() + ": " + e.getMessage(), e);
        }
    }

    static void require(Connection connection, FencedTable table) throws SQLException {
        List<Problem> problems = check(connection, table);
        if (!problems.isEmpty()) {
            throw new SchemaProblemException(problems);
        }
    }

    private static void resourceTable(Connection connection, List<Problem> problems, String table, String valueColumn, String user)
            throws SQLException {
        Map<String, Column> columns = columns(connection, table);
        if (columns.isEmpty()) {
            problems.add(new Problem(table, null, "no such table: " + user
                    + " needs it (FencedSchema.migrate or the command fenced migrate creates it)"));
            return;
        }
        requireBigintNotNull(problems, table, columns, valueColumn, "the value column");
        if (requirePresent(problems, table, columns, "resource", "the resource column")
                && !uniquelyIndexed(connection, table, "resource", Set.of("resource"))) {
            problems.add(new Problem(table, "resource", "is not unique: make it the primary key"));
        }
    }

    private static boolean requirePresent(List<Problem> problems, String table, Map<String, Column> columns, String column, String what) {
        if (!columns.containsKey(key(column))) {
            problems.add(new Problem(table, column, "missing: " + what + " must exist"));
            return false;
        }
        return true;
    }

    private static void requireBigintNotNull(List<Problem> problems, String table, Map<String, Column> columns, String column, String what) {
        if (!requirePresent(problems, table, columns, column, what)) {
            return;
        }
        Column found = columns.get(key(column));
        if (found.type() != Types.BIGINT) {
            problems.add(new Problem(table, column, "is " + found.typeName() + "; " + what + " must be BIGINT (tokens are 64-bit)"));
        }
        if (found.nullable()) {
            problems.add(new Problem(table, column, "is nullable; " + what + " must be NOT NULL (with DEFAULT 0): a NULL fence"
                    + " makes every claim of the row fail as if another holder had it"));
        }
    }

    private record Column(int type, String typeName, boolean nullable) {
    }

    private static String key(String name) {
        return name.toLowerCase(Locale.ROOT);
    }

    private static Map<String, Column> columns(Connection connection, String table) throws SQLException {
        DatabaseMetaData meta = connection.getMetaData();
        Map<String, Column> columns = new LinkedHashMap<>();
        try (ResultSet rs = meta.getColumns(connection.getCatalog(), schema(connection), stored(meta, table), null)) {
            while (rs.next()) {
                columns.put(key(rs.getString("COLUMN_NAME")), new Column(rs.getInt("DATA_TYPE"), rs.getString("TYPE_NAME"),
                        rs.getInt("NULLABLE") != DatabaseMetaData.columnNoNulls));
            }
        }
        return columns;
    }

    /** True when a unique index (the primary key included) covers {@code column} and no column outside {@code allowed}. */
    private static boolean uniquelyIndexed(Connection connection, String table, String column, Set<String> allowed) throws SQLException {
        DatabaseMetaData meta = connection.getMetaData();
        Map<String, Set<String>> indexes = new HashMap<>();
        try (ResultSet rs = meta.getIndexInfo(connection.getCatalog(), schema(connection), stored(meta, table), true, false)) {
            while (rs.next()) {
                String index = rs.getString("INDEX_NAME");
                String indexed = rs.getString("COLUMN_NAME");
                if (index != null && indexed != null) {
                    indexes.computeIfAbsent(index, name -> new HashSet<>()).add(key(indexed));
                }
            }
        }
        return indexes.values().stream().anyMatch(cols -> cols.contains(column) && allowed.containsAll(cols));
    }

    private static String schema(Connection connection) throws SQLException {
        return JdbcDialect.detect(connection).metadataSchema(connection);
    }

    /** An unquoted identifier as the database stores it. */
    private static String stored(DatabaseMetaData meta, String name) throws SQLException {
        if (meta.storesLowerCaseIdentifiers()) {
            return name.toLowerCase(Locale.ROOT);
        }
        if (meta.storesUpperCaseIdentifiers()) {
            return name.toUpperCase(Locale.ROOT);
        }
        return name;
    }
}
