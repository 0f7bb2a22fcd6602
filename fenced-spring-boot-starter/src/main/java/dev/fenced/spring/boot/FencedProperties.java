package dev.fenced.spring.boot;

import dev.fenced.redis.RedisTls;
import dev.fenced.redis.TokenIssuer;
import java.nio.file.Path;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The starter's settings, under {@code fenced.*}. Every one has a default; an application that
 * already has Spring Data Redis and a {@code DataSource} needs none of them.
 */
@ConfigurationProperties("fenced")
public class FencedProperties {
    private final Redis redis = new Redis();
    private final Lease lease = new Lease();
    private final Floor floor = new Floor();
    private final Rows rows = new Rows();
    private final Schema schema = new Schema();
    private final Shedlock shedlock = new Shedlock();
    /**
     * Where fencing tokens come from: redis (the Redis counter, taken with the lease in one script;
     * reseeded from fenced.floor.* when Redis loses it), epochs (the Redis counter in epochs drawn
     * from the database sequence fence_epoch_seq: tokens that never repeat or go back whatever Redis
     * loses; not with fenced.floor.*) or database (the sequence fence_token_seq; Redis keeps only the lease).
     */
    private String tokens = "redis";
    /**
     * Where leases live: redis (a RedisLeaseStore on fenced.redis.url or the application's Spring Data
     * Redis client) or database (a JdbcLeaseStore in the application's DataSource, table fence_lease,
     * tokens from the sequence fence_token_seq; no Redis needed).
     */
    private String leases = "redis";
    /** Whether the starter wires anything at all; false leaves an application as if fenced were not on its class path. */
    private boolean enabled = true;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Redis getRedis() {
        return redis;
    }

    public Lease getLease() {
        return lease;
    }

    public Floor getFloor() {
        return floor;
    }

    public Rows getRows() {
        return rows;
    }

    public Shedlock getShedlock() {
        return shedlock;
    }

    public Schema getSchema() {
        return schema;
    }

    public String getTokens() {
        return tokens;
    }

    /** Checked as it is bound, so a misspelt value stops the application at start, whoever builds the lease store. */
    public void setTokens(String tokens) {
        this.tokens = TokenIssuer.ofSetting(tokens).setting();
    }

    public String getLeases() {
        return leases;
    }

    /** Checked as it is bound, so a misspelt value stops the application at start instead of leaving it without a lease store. */
    public void setLeases(String leases) {
        String setting = leases == null ? "" : leases.trim().toLowerCase(java.util.Locale.ROOT);
        if (!setting.equals("redis") && !setting.equals("database")) {
            throw new IllegalArgumentException("fenced.leases must be redis or database, got " + leases);
        }
        this.leases = setting;
    }

    /** The Redis the leases live in. */
    public static class Redis {
        /**
         * Redis URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis-sentinel://host:port#master.
         * When unset, the store opens a connection on the application's Spring Data Redis Lettuce client.
         */
        private String url;
        /** Put before every key, e.g. "app1:", so applications sharing one Redis keep their leases and counters apart. */
        private String keyPrefix;
        /** How long one command may take, for a store on its own URL. */
        private Duration commandTimeout = Duration.ofSeconds(5);
        /** A readable prefix for lease owner ids, e.g. the application's name. */
        private String ownerLabel;
        private final Tls tls = new Tls();

        public Tls getTls() {
            return tls;
        }

        public String getUrl() {
            return url;
        }

        public void setUrl(String url) {
            this.url = url;
        }

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        public Duration getCommandTimeout() {
            return commandTimeout;
        }

        public void setCommandTimeout(Duration commandTimeout) {
            this.commandTimeout = commandTimeout;
        }

        public String getOwnerLabel() {
            return ownerLabel;
        }

        public void setOwnerLabel(String ownerLabel) {
            this.ownerLabel = ownerLabel;
        }
    }

    /** TLS for a rediss:// or rediss-cluster:// {@code fenced.redis.url}. */
    public static class Tls {
        /** PEM certificates to trust instead of the JVM's trust store. */
        private Path caFile;
        /** This client's PEM certificate chain, for servers that ask for one. */
        private Path certFile;
        /** Its unencrypted PKCS#8 PEM private key. */
        private Path keyFile;
        /** How much of the server's certificate to verify: full (chain and host name), ca (chain only), none. */
        private RedisTls.Verify verify = RedisTls.Verify.FULL;

        public Path getCaFile() {
            return caFile;
        }

        public void setCaFile(Path caFile) {
            this.caFile = caFile;
        }

        public Path getCertFile() {
            return certFile;
        }

        public void setCertFile(Path certFile) {
            this.certFile = certFile;
        }

        public Path getKeyFile() {
            return keyFile;
        }

        public void setKeyFile(Path keyFile) {
            this.keyFile = keyFile;
        }

        public RedisTls.Verify getVerify() {
            return verify;
        }

        public void setVerify(RedisTls.Verify verify) {
            this.verify = verify;
        }
    }

    /** The leases the FencedExecutor takes. */
    public static class Lease {
        /** How long a lease lives without renewal. */
        private Duration ttl = Duration.ofSeconds(30);
        /** Renew every this fraction of the TTL while a task runs; 0 turns renewal off. */
        private double renewalFraction = 1.0 / 3;

        public Duration getTtl() {
            return ttl;
        }

        public void setTtl(Duration ttl) {
            this.ttl = ttl;
        }

        public double getRenewalFraction() {
            return renewalFraction;
        }

        public void setRenewalFraction(double renewalFraction) {
            this.renewalFraction = renewalFraction;
        }
    }

    /** Where a lost Redis counter is reseeded from: the highest fence stored in a table. */
    public static class Floor {
        /** The table whose highest fence a lost counter is raised above; unset: no floor (a lost counter after tokens were seen is refused). */
        private String table;
        /** The fence column of that table. */
        private String fenceColumn = "fence";

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = table;
        }

        public String getFenceColumn() {
            return fenceColumn;
        }

        public void setFenceColumn(String fenceColumn) {
            this.fenceColumn = fenceColumn;
        }
    }

    /** A work table for FencedRows (claim: pending to claimed under fence &lt; token; confirm: claimed to done under fence = token). */
    public static class Rows {
        /** The work table; unset: no FencedRows bean. */
        private String table;
        /** The id column: unique alone, or with the scope column. */
        private String idColumn = "id";
        /** The column holding the row's state. */
        private String stateColumn = "state";
        /** The fence column: BIGINT NOT NULL, the token of the last holder that wrote the row. */
        private String fenceColumn = "fence";
        /** A column that scopes ids (e.g. a merchant), when ids are unique only with it. */
        private String scopeColumn;
        /** The state of a row waiting for work. */
        private String pendingState = "pending";
        /** The state a claim moves a row to, before the side effect. */
        private String claimedState = "sending";
        /** The state a confirm moves a row to, after the side effect. */
        private String doneState = "sent";

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = table;
        }

        public String getIdColumn() {
            return idColumn;
        }

        public void setIdColumn(String idColumn) {
            this.idColumn = idColumn;
        }

        public String getStateColumn() {
            return stateColumn;
        }

        public void setStateColumn(String stateColumn) {
            this.stateColumn = stateColumn;
        }

        public String getFenceColumn() {
            return fenceColumn;
        }

        public void setFenceColumn(String fenceColumn) {
            this.fenceColumn = fenceColumn;
        }

        public String getScopeColumn() {
            return scopeColumn;
        }

        public void setScopeColumn(String scopeColumn) {
            this.scopeColumn = scopeColumn;
        }

        public String getPendingState() {
            return pendingState;
        }

        public void setPendingState(String pendingState) {
            this.pendingState = pendingState;
        }

        public String getClaimedState() {
            return claimedState;
        }

        public void setClaimedState(String claimedState) {
            this.claimedState = claimedState;
        }

        public String getDoneState() {
            return doneState;
        }

        public void setDoneState(String doneState) {
            this.doneState = doneState;
        }
    }

    /** The ShedLock bridge (fenced-shedlock on the class path, no LockProvider of the application's). */
    public static class Shedlock {
        /** Put before every @SchedulerLock name to make its lease's resource. */
        private String prefix = "shedlock:";

        public String getPrefix() {
            return prefix;
        }

        public void setPrefix(String prefix) {
            this.prefix = prefix;
        }
    }

    /** The library's own tables (fence_guard, fence_counter, fence_token_seq). */
    public static class Schema {
        /**
         * Create or upgrade them at start-up with Flyway (needs flyway-core and the database's Flyway
         * module). Unset: only in an embedded database, as Boot's spring.sql.init.mode=embedded does,
         * and fenced supports none, so in practice never; true: in any database; false: never (apply the
         * scripts in dev/fenced/jdbc/migration yourself).
         */
        private Boolean migrate;

        public Boolean getMigrate() {
            return migrate;
        }

        public void setMigrate(Boolean migrate) {
            this.migrate = migrate;
        }
    }
}
