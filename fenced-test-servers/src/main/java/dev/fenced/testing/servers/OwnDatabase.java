package dev.fenced.testing.servers;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/**
 * A database of a test's own on a test server (PostgreSQL or MariaDB), created empty and dropped on
 * {@link #close()}: for what a whole database records, such as its deployment, that tests sharing
 * the server's database would see each other change.
 */
public final class OwnDatabase implements AutoCloseable {
    private final String serverUrl;
    private final String name;

    private OwnDatabase(String serverUrl, String name) {
        this.serverUrl = serverUrl;
        this.name = name;
    }

    /** Creates an empty database on the server of {@code serverUrl}, with the same user and parameters. */
    public static OwnDatabase on(String serverUrl) {
        String name = "fenced_own_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        execute(serverUrl, "CREATE DATABASE " + name);
        return new OwnDatabase(serverUrl, name);
    }

    /** The JDBC URL of this database. */
    public String url() {
        return withDatabase(serverUrl, name);
    }

    @Override
    public void close() {
        execute(serverUrl, "DROP DATABASE " + name + (serverUrl.startsWith("jdbc:postgresql:") ? " WITH (FORCE)" : ""));
    }

    private static void execute(String serverUrl, String sql) {
        try (Connection c = DriverManager.getConnection(serverUrl); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("could not run '" + sql + "' on the test server: " + e.getMessage(), e);
        }
    }

    /** jdbc:...://host:port/<database>?params: the same server and parameters, another database. */
    private static String withDatabase(String url, String database) {
        return url.replaceFirst("^(jdbc:[a-z]+://[^/?]+/)[^?]*", "$1" + database);
    }
}
