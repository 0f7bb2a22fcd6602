package dev.fenced.embedded;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * A real PostgreSQL server from the packaged binaries, in a temporary data directory. It runs
 * without fsync: it is for demos and tests, and a crash of the machine may lose its data.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {
    private final EmbeddedPostgres postgres;

    private EmbeddedPostgresServer(EmbeddedPostgres postgres) {
        this.postgres = postgres;
    }

    public static EmbeddedPostgresServer start() {
        try {
            return new EmbeddedPostgresServer(EmbeddedPostgres.builder()
                    .setServerConfig("fsync", "off")
                    .setServerConfig("synchronous_commit", "off")
                    .setServerConfig("full_page_writes", "off")
                    .setServerConfig("max_connections", "200")
                    .start());
        } catch (IOException e) {
            throw new UncheckedIOException("could not start embedded PostgreSQL", e);
        }
    }

    /** A JDBC URL for the {@code postgres} database as user {@code postgres}. */
    public String jdbcUrl() {
        return jdbcUrl("postgres");
    }

    /** A JDBC URL for {@code database} as user {@code postgres}; the database must exist. */
    public String jdbcUrl(String database) {
        return postgres.getJdbcUrl("postgres", database);
    }

    @Override
    public void close() {
        try {
            postgres.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
