package dev.fenced.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FencedObserver;
import dev.fenced.LeaseArguments;
import dev.fenced.StoreUnavailableException;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.internal.Redaction;
import dev.fenced.etcd.EtcdLeaseStore;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.jdbc.JdbcLeaseStore;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.redis.LeaseSnapshot;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.RedisTls;
import dev.fenced.redis.TokenIssuer;
import dev.fenced.settlement.DeploymentLeaseStore;
import dev.fenced.settlement.LeaseStoreMismatchException;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.SettlementWorker;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * The lease options of the commands that use leases ({@code --leases}, {@code --redis-url}, TLS,
 * {@code --tokens}, {@code --etcd-url}), each with an environment variable as fallback, and the
 * connection helpers every command shares. The database and gateway options are
 * {@link DatabaseOptions} and {@link GatewayOptions}.
 */
public final class Connections {
    @Option(names = "--leases", paramLabel = "redis|database|etcd", defaultValue = "${env:FENCED_LEASES:-redis}",
            converter = LeaseBackend.Converter.class,
            description = {"where leases and their tokens live (env FENCED_LEASES; default ${DEFAULT-VALUE}): redis (--redis-url; tokens as"
                    + " --tokens says), database (the --db-url database: a lease row and the sequence fence_token_seq, no Redis at all)"
                    + " or etcd (--etcd-url; tokens from etcd's revisions). One choice per deployment, recorded in the database:"
                    + " another is refused (exit 16)."})
    public LeaseBackend leaseBackend;

    @Option(names = "--etcd-url", paramLabel = "URLS", defaultValue = "${env:FENCED_ETCD_URL}",
            description = "for --leases etcd: its endpoints, http://host:port[,http://host:port...] (env FENCED_ETCD_URL)")
    public String etcdUrl;

    @Option(names = "--redis-url", paramLabel = "URL", defaultValue = "${env:FENCED_REDIS_URL}",
            description = "Redis, redis://[user:password@]host:port or rediss://... (env FENCED_REDIS_URL)")
    public String redisUrl;

    @Option(names = "--redis-tls-ca", paramLabel = "PEM", defaultValue = "${env:FENCED_REDIS_TLS_CA}",
            description = "for rediss://: the certificates to trust instead of the JVM's (env FENCED_REDIS_TLS_CA)")
    public Path redisTlsCa;

    @Option(names = "--redis-tls-cert", paramLabel = "PEM", defaultValue = "${env:FENCED_REDIS_TLS_CERT}",
            description = "for rediss:// servers that ask for one: this client's certificate chain (env FENCED_REDIS_TLS_CERT)")
    public Path redisTlsCert;

    @Option(names = "--redis-tls-key", paramLabel = "PEM", defaultValue = "${env:FENCED_REDIS_TLS_KEY}",
            description = "its unencrypted PKCS#8 private key (env FENCED_REDIS_TLS_KEY)")
    public Path redisTlsKey;

    @Option(names = "--redis-tls-verify", paramLabel = "full|ca|none", defaultValue = "full",
            description = "how much of the server's certificate to check: chain and host name, chain only, nothing (default ${DEFAULT-VALUE})")
    public String redisTlsVerify;

    @Option(names = "--tokens", paramLabel = "redis|epochs|database", defaultValue = "${env:FENCED_TOKENS:-redis}",
            converter = TokensConverter.class,
            description = {"who issues fencing tokens (env FENCED_TOKENS; default ${DEFAULT-VALUE}): redis, its counter reseeded from the"
                    + " refunds' highest fence when lost; epochs, Redis's counter in epochs from the database sequence fence_epoch_seq,"
                    + " never repeating whatever Redis loses (a failover to a lagging replica included); database, every token from the"
                    + " sequence fence_token_seq. One choice per deployment: tokens of different choices do not order."})
    public TokenIssuer tokens;

    /** Reads {@code --tokens} when the command line is parsed, before anything connects. */
    public static final class TokensConverter implements picocli.CommandLine.ITypeConverter<TokenIssuer> {
        @Override
        public TokenIssuer convert(String value) {
            return tokens(value);
        }
    }

    /**
     * The lease store on {@code --redis-url}, with the TLS options when any is given.
     *
     * @throws UsageException for TLS options that cannot work: a missing file, a certificate without its key, a plain URL
     */
    public RedisLeaseStore leases(HikariDataSource database, String ownerLabel, FencedObserver observer) {
        RedisLeaseStore.Builder builder = leasesBuilder(requireRedisUrl(), database, ownerLabel, observer,
                tokens);
        RedisTls tls = tls();
        if (tls == null) {
            return builder.build();
        }
        try {
            return builder.tls(tls).build();
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage()); // TLS settings on a plain redis:// URL
        }
    }

    private RedisTls tls() {
        RedisTls.Verify verify;
        try {
            verify = RedisTls.Verify.valueOf(redisTlsVerify.toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new UsageException("--redis-tls-verify must be full, ca or none, got " + redisTlsVerify);
        }
        try {
            return RedisTls.fromSettings(redisTlsCa, redisTlsCert, redisTlsKey, verify, "--redis-tls-cert", "--redis-tls-key").orElse(null);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /**
     * Opens the store {@code --leases} names, after checking that it is this deployment's recorded
     * choice (recording it when none is); the store checks it again before every acquisition, so a
     * switch stops this process at its next lease.
     *
     * @throws LeaseStoreMismatchException when the deployment records another store
     */
    public OpenLeases openLeases(HikariDataSource database, String ownerLabel, FencedObserver observer) {
        String setting = backend().setting();
        DeploymentLeaseStore.requireSame(database, setting);
        OpenLeases opened = openLeasesUnchecked(database, ownerLabel, observer);
        return opened.checkedBy(store -> DeploymentLeaseStore.checking(store, database, setting));
    }

    /** The refusal in the command line's words: the options and the command that switches. */
    static String describe(LeaseStoreMismatchException mismatch) {
        return DeploymentLeaseStore.switchingTo(mismatch.recorded())
                .map(to -> "a switch of this deployment's leases to " + to + " is under way; this process (--leases " + mismatch.requested()
                        + ") took no lease. Finish it with 'fenced migrate --leases " + to + "', then use --leases " + to)
                .orElse("this deployment's leases are in " + mismatch.recorded() + " (recorded in the database), this process was started"
                        + " with --leases " + mismatch.requested() + "; leases in two stores do not keep each other's holders out, so it took"
                        + " no lease. Use --leases " + mismatch.recorded() + ", or stop every worker and run 'fenced migrate --leases "
                        + mismatch.requested() + "'");
    }

    /** Opens the store {@code --leases} names without the deployment's check: for commands that only read, and for a switch. */
    public OpenLeases openLeasesUnchecked(HikariDataSource database, String ownerLabel, FencedObserver observer) {
        return switch (backend()) {
            case REDIS -> {
                RedisLeaseStore redis = leases(database, ownerLabel, observer);
                yield new OpenLeases(redis, redis::close);
            }
            case DATABASE -> {
                JdbcLeaseStore.Builder builder = JdbcLeaseStore.builder(database).observer(observer);
                if (ownerLabel != null) {
                    builder.ownerLabel(ownerLabel);
                }
                yield new OpenLeases(builder.build(), () -> { }); // the pool is the caller's
            }
            case ETCD -> {
                EtcdLeaseStore.Builder builder = etcdBuilder().observer(observer);
                if (ownerLabel != null) {
                    builder.ownerLabel(ownerLabel);
                }
                EtcdLeaseStore etcd = builder.build();
                yield new OpenLeases(etcd, etcd::close);
            }
        };
    }

    /**
     * Checks the lease options before anything connects: the URL the chosen store needs, and no
     * {@code --tokens} but redis's own where the store issues its tokens itself.
     */
    public void requireLeaseSettings() {
        LeaseBackend backend = backend();
        if (backend != LeaseBackend.REDIS && tokens != null && tokens != TokenIssuer.REDIS) {
            throw new UsageException("--tokens " + tokens.setting() + " goes with --leases redis: " + backend.label()
                    + " issues its own tokens (unset FENCED_TOKENS, or use --leases redis)");
        }
        switch (backend) {
            case REDIS -> requireRedisUrl();
            case ETCD -> etcdBuilder(); // the URL parsed now; nothing connects until the first call
            case DATABASE -> { } // the --db-url every such command requires
        }
    }

    /** A builder on {@code --etcd-url}; a missing or malformed URL is a usage error naming the option. */
    private EtcdLeaseStore.Builder etcdBuilder() {
        try {
            return EtcdLeaseStore.builder(requireEtcdUrl());
        } catch (IllegalArgumentException e) {
            throw new UsageException("--etcd-url: " + e.getMessage());
        }
    }

    /**
     * What is wrong with a merchant's tokens, or null: for Redis, its issuer and counter against
     * {@code --tokens} ({@link TokensCommand#problem}); for a store that issues its own, its highest
     * token below a stored fence (the rows were fenced by another store's tokens).
     */
    String tokensProblem(LeaseSnapshot lease, long highestFence) {
        if (backend() == LeaseBackend.REDIS) {
            return TokensCommand.problem(lease, highestFence, tokens);
        }
        if (lease.counter() != null && lease.counter() < highestFence) {
            return backend().label() + "'s tokens (highest " + lease.counter() + ") are below the highest stored fence " + highestFence
                    + ": the rows were fenced by another store; raise its tokens with 'fenced migrate --leases " + backend().setting() + "'";
        }
        return null;
    }

    /** The issuer of the tokens as a status shows it: {@code --tokens} for Redis, the store itself otherwise. */
    String tokensShown(LeaseSnapshot lease) {
        if (backend() != LeaseBackend.REDIS) {
            return backend().setting();
        }
        return lease.tokenIssuer() == null ? null : TokenIssuer.settingOf(lease.tokenIssuer());
    }

    /** {@code --leases}; redis when the command was built without picocli. */
    public LeaseBackend backend() {
        return leaseBackend == null ? LeaseBackend.REDIS : leaseBackend;
    }

    /** {@code --etcd-url}, or the usage error of a command that needs it. */
    public String requireEtcdUrl() {
        return UsageException.requireGiven(etcdUrl, "--etcd-url", "FENCED_ETCD_URL");
    }

    /** {@code --redis-url}, or the usage error of a command that needs it; checked before anything connects. */
    public String requireRedisUrl() {
        return UsageException.requireGiven(redisUrl, "--redis-url", "FENCED_REDIS_URL");
    }

    /** The owner label of a worker's leases, {@code worker-NAME}: its name with anything but letters, digits, _ and - as _. */
    static String workerOwnerLabel(String workerName) {
        return "worker-" + workerName.replaceAll("[^A-Za-z0-9_-]", "_");
    }

    /** How long a SIGTERM waits for the refunds in flight to finish before the process exits anyway. */
    public static final Duration DRAIN_TIME = Duration.ofSeconds(30);

    /** Refunds in flight under one token: what the settlement worker accepts, its refusal as a usage error. */
    public static int requireConcurrency(int concurrency) {
        try {
            return SettlementWorker.requireValidConcurrency(concurrency);
        } catch (IllegalArgumentException e) {
            throw UsageException.ofOption(e);
        }
    }

    /** The shortest lease the commands accept: below it, a JVM's start-up and one round trip outlast the lease. */
    public static final Duration MIN_TTL = Duration.ofMillis(100);

    public static Duration requireUsableTtl(Duration ttl) {
        LeaseArguments.requireValidTtl(ttl);
        if (ttl.compareTo(MIN_TTL) < 0) {
            throw new UsageException("--ttl must be at least " + MIN_TTL.toMillis() + "ms, got " + ttl.toMillis()
                    + "ms: every run would end in a lost lease");
        }
        return ttl;
    }

    /** A pooled, migrated database; fails fast with one line when it is unreachable. */
    public static HikariDataSource database(String jdbcUrl, int poolSize) {
        return database(jdbcUrl, poolSize, DatabaseWaits.SERVER_DEFAULTS);
    }

    /** {@link #database(String, int)} whose every wait is bounded by {@code waits}. */
    public static HikariDataSource database(String jdbcUrl, int poolSize, DatabaseWaits waits) {
        HikariDataSource dataSource = readOnlyDatabase(jdbcUrl, poolSize, waits);
        try {
            RefundSchema.migrate(dataSource);
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
        return dataSource;
    }

    /** A pooled database, not migrated: commands that only read never write, not even the schema. */
    public static HikariDataSource readOnlyDatabase(String jdbcUrl, int poolSize) {
        return readOnlyDatabase(jdbcUrl, poolSize, DatabaseWaits.SERVER_DEFAULTS);
    }

    /** {@link #readOnlyDatabase(String, int)} whose every wait is bounded by {@code waits}. */
    public static HikariDataSource readOnlyDatabase(String jdbcUrl, int poolSize, DatabaseWaits waits) {
        String supported = "jdbc:postgresql:// (PostgreSQL) or jdbc:mariadb:// (MariaDB)";
        if (jdbcUrl.startsWith("jdbc:mysql:")) {
            throw new UsageException("MySQL is not supported (MariaDB's URL scheme is jdbc:mariadb:): the database URL must start with " + supported);
        }
        if (!jdbcUrl.startsWith("jdbc:postgresql:") && !jdbcUrl.startsWith("jdbc:mariadb:")) {
            throw new UsageException("database URL must start with " + supported + ", got " + Redaction.describe(jdbcUrl));
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(poolSize);
        // Connections open as work needs them: a fleet of workers sized for its peak would otherwise
        // hold jobs x (concurrency + 2) connections each from the start, past a default PostgreSQL's 100.
        config.setMinimumIdle(Math.min(2, poolSize));
        config.setConnectionTimeout(5_000);
        config.setInitializationFailTimeout(1); // one attempt at start: an unreachable database is one line at once, not after retries
        config.setPoolName("fenced");
        waits.applyTo(config, jdbcUrl);
        HikariDataSource dataSource;
        try {
            dataSource = new HikariDataSource(config);
        } catch (RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            throw new StoreUnavailableException("database at " + Redaction.describe(jdbcUrl) + " is unreachable: "
                    + Redaction.scrub(String.valueOf(root.getMessage()), Redaction.secretsOf(jdbcUrl)), e);
        }
        return dataSource;
    }

    /** The {@code --tokens} value; picocli reports anything else as a usage error. */
    public static TokenIssuer tokens(String value) {
        try {
            return TokenIssuer.ofSetting(value);
        } catch (IllegalArgumentException e) {
            throw new picocli.CommandLine.TypeConversionException(e.getMessage());
        }
    }

    /** A Redis lease store whose counter is reseeded from the refunds' highest fence. */
    public static RedisLeaseStore leases(String redisUrl, HikariDataSource database, String ownerLabel) {
        return leasesBuilder(redisUrl, database, ownerLabel, FencedObserver.NONE, TokenIssuer.REDIS).build();
    }

    /** The store every command uses: tokens as chosen (the counter reseeded from the refund rows by default), owner ids labelled. */
    private static RedisLeaseStore.Builder leasesBuilder(String redisUrl, HikariDataSource database, String ownerLabel,
                                                         FencedObserver observer, TokenIssuer tokens) {
        RedisLeaseStore.Builder builder = RedisLeaseStore.builder(redisUrl).observer(observer)
                .tokens(tokens.policy(() -> JdbcFenceFloor.of(database, RefundSchema.table(), Merchants::merchantOf),
                        () -> JdbcSequenceTokenSource.epochs(database), () -> JdbcSequenceTokenSource.of(database)));
        if (ownerLabel != null) {
            builder.ownerLabel(ownerLabel);
        }
        return builder;
    }

    public static GatewayClient gateway(String url) {
        return gateway(url, Duration.ofSeconds(5));
    }

    /** The simulated gateway's client, each call bounded by {@code timeout}. */
    public static GatewayClient gateway(String url, Duration timeout) {
        return GatewayClient.of(url, timeout);
    }
}
