package dev.fenced.testing;

import dev.fenced.embedded.EmbeddedPostgresServer;
import java.util.Optional;
import javax.sql.DataSource;
import org.junit.jupiter.api.Assumptions;

/**
 * The databases tests run against. PostgreSQL: {@code FENCED_PG_URL} (a JDBC URL), else an
 * embedded real PostgreSQL started once per JVM. MariaDB: {@code FENCED_MARIADB_URL}; without it
 * MariaDB tests are skipped locally, and fail in CI ({@code CI=true}) so that a missing server is
 * never mistaken for a pass.
 */
public final class TestDatabases {
    public static final String PG_ENV = "FENCED_PG_URL";
    public static final String MARIADB_ENV = "FENCED_MARIADB_URL";
    private static EmbeddedPostgresServer embeddedPostgres;

    private TestDatabases() {
    }

    /** A JDBC URL for the test PostgreSQL. */
    public static synchronized String postgresUrl() {
        String configured = System.getenv(PG_ENV);
        if (configured != null && !configured.isBlank()) {
            return configured;
        }
        if (embeddedPostgres == null) {
            embeddedPostgres = EmbeddedPostgresServer.start();
            Runtime.getRuntime().addShutdownHook(new Thread(embeddedPostgres::close, "embedded-postgres-stop"));
        }
        return embeddedPostgres.jdbcUrl();
    }

    public static DataSource postgres() {
        return new UrlDataSource(postgresUrl());
    }

    /** A JDBC URL for the test MariaDB, or empty when none is configured. */
    public static Optional<String> mariadbUrl() {
        String configured = System.getenv(MARIADB_ENV);
        return configured == null || configured.isBlank() ? Optional.empty() : Optional.of(configured);
    }

    /** The test MariaDB; skips the calling test when none is configured outside CI. */
    public static DataSource mariadb() {
        Optional<String> url = mariadbUrl();
        if (url.isEmpty()) {
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                throw new IllegalStateException(MARIADB_ENV + " must be set in CI: MariaDB tests may not be skipped");
            }
            Assumptions.abort(MARIADB_ENV + " is not set; MariaDB tests skipped");
        }
        return new UrlDataSource(url.get());
    }

    /**
     * A second store, for the settlement journal: the test MariaDB when one is configured, else a
     * second database ({@code fenced_journal}) on the test PostgreSQL, created when missing.
     */
    public static synchronized String journalUrl() {
        Optional<String> mariadb = mariadbUrl();
        if (mariadb.isPresent()) {
            return mariadb.get();
        }
        String url = postgresUrl();
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url);
             java.sql.Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT 1 FROM pg_database WHERE datname = 'fenced_journal'")) {
            if (!rs.next()) {
                s.execute("CREATE DATABASE fenced_journal");
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException("could not create the journal's database: " + e.getMessage(), e);
        }
        // jdbc:postgresql://host:port/<database>?params: the same server, the other database
        return url.replaceFirst("^(jdbc:postgresql://[^/]+/)[^?]*", "$1fenced_journal");
    }
}
