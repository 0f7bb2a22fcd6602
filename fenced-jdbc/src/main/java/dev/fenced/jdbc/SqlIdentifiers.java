package dev.fenced.jdbc;

import java.util.regex.Pattern;

/**
 * Checks table and column names that come from configuration. They are pasted into SQL, so only
 * plain identifiers are accepted: a letter or underscore, then letters, digits or underscores, at
 * most 63 characters, optionally qualified by a schema ({@code billing.refund}).
 */
public final class SqlIdentifiers {
    private static final Pattern PART = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
    private static final Pattern STATE = Pattern.compile("[A-Za-z0-9_]{1,32}");

    private SqlIdentifiers() {
    }

    /** Returns {@code name} when it is a plain column name. */
    public static String column(String what, String name) {
        if (name == null || !PART.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " '" + name + "' is not a valid SQL identifier:"
                    + " use letters, digits and underscores, starting with a letter or underscore, at most 63 characters");
        }
        return name;
    }

    /** Returns {@code name} when it is a plain table name, optionally schema-qualified. */
    public static String table(String what, String name) {
        if (name == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        String[] parts = name.split("\\.", -1);
        if (parts.length > 2) {
            throw new IllegalArgumentException(what + " '" + name + "' has more than one dot; use table or schema.table");
        }
        for (String part : parts) {
            column(what, part);
        }
        return name;
    }

    /** Returns {@code value} when it is a usable state name: 1 to 32 letters, digits or underscores. */
    static String state(String what, String value) {
        if (value == null || !STATE.matcher(value).matches()) {
            throw new IllegalArgumentException(what + " '" + value + "' must be 1 to 32 letters, digits or underscores");
        }
        return value;
    }
}
