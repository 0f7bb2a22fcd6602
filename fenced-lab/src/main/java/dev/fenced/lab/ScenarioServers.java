package dev.fenced.lab;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FencedObserver;
import dev.fenced.LeaseView;
import dev.fenced.cli.Connections;
import dev.fenced.cli.LeaseBackend;
import dev.fenced.cli.OpenLeases;
import dev.fenced.embedded.EmbeddedEtcd;
import dev.fenced.embedded.EmbeddedPostgresServer;
import dev.fenced.embedded.EmbeddedRedis;
import dev.fenced.internal.Redaction;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenIssuer;
import java.io.PrintStream;
import java.util.HashMap;
import java.util.Map;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The servers the worked example runs on: PostgreSQL and the lease store (Redis, the database itself
 * or etcd), embedded unless URLs are given. Only embedded ones are reset between runs; servers of
 * the user's own must be fresh.
 */
final class ScenarioServers implements AutoCloseable {
    final LeaseBackend backend;
    /** The lease store's URL: Redis's or etcd's; null when the leases are in the database. */
    final String leaseUrl;
    final String dbUrl;
    final HikariDataSource db;
    final Source leaseSource;
    final Source dbSource;
    private final OpenLeases leases;
    private final EmbeddedRedis redis;
    private final EmbeddedEtcd etcd;
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

    private ScenarioServers(LeaseBackend backend, EmbeddedRedis redis, EmbeddedEtcd etcd, EmbeddedPostgresServer postgres,
                            Source leaseSource, Source dbSource) {
        this.backend = backend;
        this.redis = redis;
        this.etcd = etcd;
        this.postgres = postgres;
        this.leaseSource = leaseSource;
        this.dbSource = dbSource;
        this.leaseUrl = redis != null ? redis.uri() : etcd != null ? etcd.endpoints() : leaseSource.url();
        this.dbUrl = postgres != null ? postgres.jdbcUrl() : dbSource.url();
        HikariDataSource opened = null;
        try {
            opened = Connections.database(dbUrl, 4);
            Connections options = new Connections();
            options.leaseBackend = backend;
            options.redisUrl = backend == LeaseBackend.REDIS ? leaseUrl : null;
            options.etcdUrl = backend == LeaseBackend.ETCD ? leaseUrl : null;
            options.tokens = TokenIssuer.REDIS;
            options.redisTlsVerify = "full";
            this.leases = options.openLeasesUnchecked(opened, "scenario", FencedObserver.NONE);
            this.db = opened;
        } catch (RuntimeException e) {
            if (opened != null) {
                opened.close();
            }
            stopEmbedded();
            throw e;
        }
    }

    /** PostgreSQL and Redis embedded. */
    static ScenarioServers embedded(PrintStream progress) {
        return start(LeaseBackend.REDIS, Source.EMBEDDED, Source.EMBEDDED, progress);
    }

    /**
     * Starts the embedded servers and connects, printing a line per server on {@code progress}
     * (null for none): given ones before anything connects, with where their URL came from. With
     * leases in the database, {@code leaseSource} is not used.
     */
    static ScenarioServers start(LeaseBackend backend, Source leaseSource, Source dbSource, PrintStream progress) {
        String store = backend == LeaseBackend.ETCD ? "etcd" : "Redis";
        if (backend != LeaseBackend.DATABASE && !leaseSource.embedded()) {
            say(progress, store, Redaction.describe(leaseSource.url()) + ", from " + leaseSource.origin());
        }
        if (!dbSource.embedded()) {
            say(progress, "database", Redaction.describe(dbSource.url()) + ", from " + dbSource.origin());
        }
        boolean embedLeases = backend != LeaseBackend.DATABASE && leaseSource.embedded();
        EmbeddedRedis redis = embedLeases && backend == LeaseBackend.REDIS ? EmbeddedRedis.start() : null;
        EmbeddedEtcd etcd = null;
        EmbeddedPostgresServer postgres = null;
        try {
            etcd = embedLeases && backend == LeaseBackend.ETCD ? EmbeddedEtcd.start() : null;
            postgres = dbSource.embedded() ? EmbeddedPostgresServer.start() : null;
        } catch (RuntimeException e) {
            if (redis != null) {
                redis.close();
            }
            if (etcd != null) {
                etcd.close();
            }
            throw e;
        }
        ScenarioServers servers = new ScenarioServers(backend, redis, etcd, postgres, backend == LeaseBackend.DATABASE ? dbSource : leaseSource,
                dbSource);
        if (redis != null) {
            say(progress, "Redis", "embedded redis-server " + servers.leases.redis().orElseThrow().serverVersion() + " on 127.0.0.1:" + redis.port());
        }
        if (etcd != null) {
            say(progress, "etcd", "embedded etcd on " + etcd.endpoints().substring("http://".length()));
        }
        if (postgres != null) {
            say(progress, "database", "embedded PostgreSQL " + servers.databaseProductVersion() + " on " + hostAndPort(servers.dbUrl));
        }
        if (backend == LeaseBackend.DATABASE) {
            say(progress, "leases", "in the database: table fence_lease, tokens from the sequence fence_token_seq");
        }
        return servers;
    }

    /** What the lease store holds for {@code resource} now, by its own clock. */
    LeaseView lease(String resource) {
        return leases.store().view(resource);
    }

    /**
     * Sets the store's tokens for {@code resource} so that the next is {@code fence + 1} on a fresh
     * store: the story's counter at 32. Redis's counter is raised to it; the database's sequence is
     * set to it when below (a library raise leaves a wide headroom, for races the story does not
     * have); etcd's offset is raised as a refused write at that fence would.
     */
    void tokensAbove(String resource, long fence) {
        switch (backend) {
            case REDIS -> leases.redis().orElseThrow().raiseCounter(resource, fence);
            case DATABASE -> {
                boolean postgres = dbUrl.startsWith("jdbc:postgresql:");
                String sql = postgres ? "SELECT setval('fence_token_seq', ?) FROM fence_token_seq WHERE last_value < ?"
                        : "SELECT SETVAL(fence_token_seq, ?)"; // MariaDB's SETVAL never lowers a sequence
                try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement(sql)) {
                    s.setLong(1, fence);
                    if (postgres) {
                        s.setLong(2, fence);
                    }
                    s.executeQuery().close();
                } catch (SQLException e) {
                    throw new IllegalStateException("could not set the token sequence to " + fence + ": " + e.getMessage(), e);
                }
            }
            case ETCD -> leases.store().observeStoredFence(resource, fence);
        }
    }

    /** The environment a worker process of the story needs to reach the lease store. */
    Map<String, String> leaseEnvironment() {
        Map<String, String> env = new HashMap<>(Map.of("FENCED_LEASES", backend.setting()));
        switch (backend) {
            case REDIS -> env.put("FENCED_REDIS_URL", leaseUrl);
            case ETCD -> env.put("FENCED_ETCD_URL", leaseUrl);
            case DATABASE -> { }
        }
        return env;
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
        boolean leasesEmbedded = backend == LeaseBackend.DATABASE || redis != null || etcd != null;
        if (!leasesEmbedded || postgres == null) {
            return;
        }
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("DELETE FROM refund WHERE merchant = ?")) {
            s.setString(1, Scenario.MERCHANT);
            s.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException("could not reset the refunds: " + e.getMessage(), e);
        }
        leases.redis().ifPresent(redisLeases -> redisLeases.forget(resource));
    }

    /** The Redis server's version as INFO reports it, e.g. "redis-server 6.2.6 (embedded)"; only with leases in Redis. */
    String redisVersion() {
        RedisLeaseStore redisLeases = leases.redis().orElseThrow(() -> new IllegalStateException("the leases are not in Redis"));
        return "redis-server " + redisLeases.serverVersion() + (redis != null ? " (embedded)" : "");
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
        if (etcd != null) {
            etcd.close();
        }
    }

    @Override
    public void close() {
        try {
            leases.close();
        } finally {
            try {
                db.close();
            } finally {
                stopEmbedded();
            }
        }
    }
}
