package dev.fenced.testing.servers;

import dev.fenced.embedded.EmbeddedPostgresServer;
import java.util.Optional;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.junit.jupiter.api.Assumptions;

/**
 * The databases tests run against. PostgreSQL: {@code FENCED_PG_URL} (a JDBC URL), else an
 * embedded real PostgreSQL started once per JVM. MariaDB: {@code FENCED_MARIADB_URL}; without it
 * MariaDB tests are skipped locally, and fail in CI ({@code CI=true}) so that a missing server is
 * never mistaken for a pass. The command line's {@code FENCED_DB_URL} stands for whichever of the
 * two its scheme names when that one is not set, so one export serves the CLI and the tests.
 */
public final class TestDatabases {
    public static final String PG_ENV = "FENCED_PG_URL";
    public static final String MARIADB_ENV = "FENCED_MARIADB_URL";
    /** The command line's one database, {@code jdbc:postgresql:} or {@code jdbc:mariadb:}. */
    public static final String DB_ENV = "FENCED_DB_URL";
    private static EmbeddedPostgresServer embeddedPostgres;

    private TestDatabases() {
    }

    /** A JDBC URL for the test PostgreSQL. */
    public static synchronized String postgresUrl() {
        Optional<String> configured = configuredPostgresUrl();
        if (configured.isPresent()) {
            return configured.get();
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

    /** The PostgreSQL named by the environment, or empty when {@link #postgresUrl()} would start one. */
    public static Optional<String> configuredPostgresUrl() {
        return configured(System::getenv, PG_ENV, "jdbc:postgresql:");
    }

    /** A JDBC URL for the test MariaDB, or empty when none is configured. */
    public static Optional<String> mariadbUrl() {
        return configured(System::getenv, MARIADB_ENV, "jdbc:mariadb:");
    }

    /** {@code specific}'s value, else {@code FENCED_DB_URL}'s when it starts with {@code scheme}. */
    static Optional<String> configured(UnaryOperator<String> env, String specific, String scheme) {
        String own = env.apply(specific);
        if (own != null && !own.isBlank()) {
            return Optional.of(own);
        }
        String shared = env.apply(DB_ENV);
        return shared != null && shared.startsWith(scheme) ? Optional.of(shared) : Optional.empty();
    }

    /** The test MariaDB; skips the calling test when none is configured outside CI. */
    public static DataSource mariadb() {
        Optional<String> url = mariadbUrl();
        if (url.isEmpty()) {
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                throw new IllegalStateException(MARIADB_ENV + " must be set in CI: MariaDB tests may not be skipped");
            }
            Assumptions.abort("neither " + MARIADB_ENV + " nor a jdbc:mariadb: " + DB_ENV + " is set; MariaDB tests skipped");
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
