package dev.fenced.lab;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.cli.Connections;
import dev.fenced.embedded.EmbeddedPostgresServer;
import dev.fenced.embedded.EmbeddedRedis;
import dev.fenced.internal.Redaction;
import dev.fenced.redis.RedisLeaseStore;
import java.io.PrintStream;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The servers the worked example runs on: an embedded redis-server and PostgreSQL unless URLs are
 * given. Only embedded ones are reset between runs; servers of the user's own must be fresh.
 */
final class ScenarioServers implements AutoCloseable {
    final String redisUrl;
    final String dbUrl;
    final HikariDataSource db;
    final RedisLeaseStore leases;
    final Source redisSource;
    final Source dbSource;
    private final EmbeddedRedis redis;
    private final EmbeddedPostgresServer postgres;

    /**
     * Where a server comes from: a URL and the option or environment variable that gave it, or
     * {@link #EMBEDDED} for one the story starts.
     */
    record Source(String url, String origin) {
        static final Source EMBEDDED = new Source(null, null);

        boolean embedded() {
            return url == null;
        }

        /** How to run the story on a fresh server instead of this given one. */
        String freshAdvice() {
            return origin.startsWith("--") ? "run it without " + origin : "run it with --embedded, or unset " + origin;
        }
    }

    private ScenarioServers(EmbeddedRedis redis, EmbeddedPostgresServer postgres, Source redisSource, Source dbSource) {
        this.redis = redis;
        this.postgres = postgres;
        this.redisSource = redisSource;
        this.dbSource = dbSource;
        this.redisUrl = redis != null ? redis.uri() : redisSource.url();
        this.dbUrl = postgres != null ? postgres.jdbcUrl() : dbSource.url();
        HikariDataSource opened = null;
        try {
            opened = Connections.database(dbUrl, 4);
            this.leases = Connections.leases(redisUrl, opened, "scenario");
            this.db = opened;
        } catch (RuntimeException e) {
            if (opened != null) {
                opened.close();
            }
            stopEmbedded();
            throw e;
        }
    }

    /** Both servers embedded. */
    static ScenarioServers embedded(PrintStream progress) {
        return start(Source.EMBEDDED, Source.EMBEDDED, progress);
    }

    /**
     * Starts the embedded servers and connects, printing a line per server on {@code progress}
     * (null for none): given ones before anything connects, with where their URL came from.
     */
    static ScenarioServers start(Source redisSource, Source dbSource, PrintStream progress) {
        if (!redisSource.embedded()) {
            say(progress, "Redis", Redaction.describe(redisSource.url()) + ", from " + redisSource.origin());
        }
        if (!dbSource.embedded()) {
            say(progress, "database", Redaction.describe(dbSource.url()) + ", from " + dbSource.origin());
        }
        EmbeddedRedis redis = redisSource.embedded() ? EmbeddedRedis.start() : null;
        EmbeddedPostgresServer postgres = null;
        if (dbSource.embedded()) {
            try {
                postgres = EmbeddedPostgresServer.start();
            } catch (RuntimeException e) {
                if (redis != null) {
                    redis.close();
                }
                throw e;
            }
        }
        ScenarioServers servers = new ScenarioServers(redis, postgres, redisSource, dbSource);
        if (redis != null) {
            say(progress, "Redis", "embedded redis-server " + servers.leases.serverVersion() + " on 127.0.0.1:" + redis.port());
        }
        if (postgres != null) {
            say(progress, "database", "embedded PostgreSQL " + servers.databaseProductVersion() + " on " + hostAndPort(servers.dbUrl));
        }
        return servers;
    }

    private static void say(PrintStream progress, String server, String where) {
        if (progress != null) {
            progress.printf("  %-9s %s%n", server, where);
        }
    }

    /** {@code localhost:5432} of {@code jdbc:postgresql://localhost:5432/postgres?user=postgres}. */
    private static String hostAndPort(String jdbcUrl) {
        URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
        return uri.getHost() + ":" + uri.getPort();
    }

    /**
     * Forgets the previous run of the story: its refunds and the merchant's lease and counter.
     * Only on embedded servers, which nobody else uses; on servers of the user's own, the
     * merchant must be fresh.
     */
    void resetForNextRun(String resource) {
        if (redis == null || postgres == null) {
            return;
        }
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("DELETE FROM refund WHERE merchant = ?")) {
            s.setString(1, Scenario.MERCHANT);
            s.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException("could not reset the refunds: " + e.getMessage(), e);
        }
        try (RedisLeaseStore leases = RedisLeaseStore.builder(redisUrl).build()) {
            leases.forget(resource);
        }
    }

    /** The Redis server's version as INFO reports it, e.g. "redis-server 6.2.6 (embedded)". */
    String redisVersion() {
        return "redis-server " + leases.serverVersion() + (redis != null ? " (embedded)" : "");
    }

    /** The database server's version, e.g. "PostgreSQL 16.4 (embedded)". */
    String databaseVersion() {
        try (Connection c = db.getConnection()) {
            var meta = c.getMetaData();
            return meta.getDatabaseProductName() + " " + meta.getDatabaseProductVersion() + (postgres != null ? " (embedded)" : "");
        } catch (SQLException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    private String databaseProductVersion() {
        try (Connection c = db.getConnection()) {
            return c.getMetaData().getDatabaseProductVersion();
        } catch (SQLException e) {
            return "(version unknown: " + e.getMessage() + ")";
        }
    }

    private void stopEmbedded() {
        if (postgres != null) {
            postgres.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    public void close() {
        leases.close();
        db.close();
        stopEmbedded();
    }
}
