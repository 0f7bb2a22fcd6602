package dev.fenced.lab;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.cli.Connections;
import dev.fenced.embedded.EmbeddedPostgresServer;
import dev.fenced.embedded.EmbeddedRedis;
import dev.fenced.redis.RedisLeaseStore;
import java.io.PrintStream;
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
    private final EmbeddedRedis redis;
    private final EmbeddedPostgresServer postgres;

    private ScenarioServers(EmbeddedRedis redis, EmbeddedPostgresServer postgres, String redisUrl, String dbUrl) {
        this.redis = redis;
        this.postgres = postgres;
        this.redisUrl = redisUrl;
        this.dbUrl = dbUrl;
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

    static ScenarioServers start(String redisUrl, String dbUrl, PrintStream progress) {
        EmbeddedRedis redis = null;
        EmbeddedPostgresServer postgres = null;
        if (redisUrl == null) {
            redis = EmbeddedRedis.start();
            say(progress, "started an embedded redis-server on port " + redis.port());
        }
        if (dbUrl == null) {
            try {
                postgres = EmbeddedPostgresServer.start();
            } catch (RuntimeException e) {
                if (redis != null) {
                    redis.close();
                }
                throw e;
            }
            say(progress, "started an embedded PostgreSQL");
        }
        return new ScenarioServers(redis, postgres, redis != null ? redis.uri() : redisUrl, postgres != null ? postgres.jdbcUrl() : dbUrl);
    }

    private static void say(PrintStream progress, String what) {
        if (progress != null) {
            progress.println("  " + what);
        }
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
