package dev.fenced.spring.boot;

import dev.fenced.EpochSource;
import dev.fenced.FenceFloor;
import dev.fenced.FencedExecutor;
import dev.fenced.FencedObserver;
import dev.fenced.LeaseStore;
import dev.fenced.TokenSource;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.FencedTable;
import dev.fenced.jdbc.FencedTransactions;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.jdbc.JdbcLeaseStore;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.jdbc.SchemaCheck;
import dev.fenced.jdbc.UnsupportedDatabaseException;
import dev.fenced.micrometer.FencedMeters;
import dev.fenced.micrometer.FencedObservations;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.RedisTls;
import dev.fenced.spring.FencedLock;
import dev.fenced.spring.FencedLockAdvisor;
import dev.fenced.spring.FencedLockInterceptor;
import dev.fenced.spring.FencedLockTransactions;
import dev.fenced.spring.SpringFencedRows;
import dev.fenced.spring.SpringFencedTransactions;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.EmbeddedDatabaseConnection;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * Wires fencing into a Spring Boot application: a {@link RedisLeaseStore} on {@code fenced.redis.url}
 * or on the application's Spring Data Redis Lettuce client (or, with {@code fenced.leases=database}, a
 * {@link JdbcLeaseStore} in the application's {@link DataSource}), a database {@link TokenSource} or {@link EpochSource} and a
 * {@link FenceFloor} when configured, {@link FencedTransactions}, {@link SpringFencedTransactions}
 * and {@link FencedRows} (with {@link SpringFencedRows} for writes inside Spring transactions) on the
 * application's {@link DataSource}, a {@link FencedExecutor}, meters
 * in the application's {@link MeterRegistry} (and, in {@link FencedHealthAutoConfiguration}, an
 * Actuator health indicator). Every bean backs off
 * when the application defines its own.
 *
 * <p>On Spring's client the store takes that client's deployment (one server, Sentinel, Cluster) and
 * TLS; on {@code fenced.redis.url}, the URL's, with {@code fenced.redis.tls.*}.
 */
// After the beans it looks for (@ConditionalOnBean sees only what was defined before it), and after the transaction
// advisor, so that @FencedLock's advisor, at the same order, runs inside @Transactional: Boot 3's names, then Boot 4's,
// whose auto-configurations moved to modules of their own. A name not on the class path is skipped.
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
            "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
            "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"
        })
@ConditionalOnProperty(name = "fenced.enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(FencedProperties.class)
public class FencedAutoConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(FencedAutoConfiguration.class);

    /**
     * Tables the library needs, made or upgraded at start-up where Boot would make schema (an embedded
     * database, which fenced does not support: H2 backs off with a warning) or where
     * {@code fenced.schema.migrate=true} asks; other beans use them only when called. Left alone, a
     * database whose tables are behind gets one line at start naming what is missing.
     */
    @Bean
    @ConditionalOnSingleCandidate(DataSource.class)
    @ConditionalOnProperty(name = "fenced.schema.migrate", havingValue = "true", matchIfMissing = true)
    public FencedSchemaMigration fencedSchemaMigration(DataSource dataSource, FencedProperties properties) {
        boolean asked = Boolean.TRUE.equals(properties.getSchema().getMigrate());
        boolean flyway = ClassUtils.isPresent("org.flywaydb.core.Flyway", FencedAutoConfiguration.class.getClassLoader());
        if (!asked && !isEmbedded(dataSource)) {
            warnOfMissingTables(dataSource, flyway);
            return new FencedSchemaMigration(false);
        }
        if (!flyway) {
            if (asked) {
                throw new IllegalStateException("fenced.schema.migrate=true needs flyway-core (and the database's Flyway module)"
                        + " on the class path; add it, or apply the scripts in " + FencedSchema.SCRIPTS + " yourself");
            }
            return new FencedSchemaMigration(false);
        }
        try {
            FencedSchema.migrate(dataSource);
            return new FencedSchemaMigration(true);
        } catch (UnsupportedDatabaseException e) {
            // An H2 of a @SpringBootTest, say: the application starts; a fenced write there is refused with the same reason.
            LOG.warn("fenced: the library's tables were not migrated, {}", e.getMessage());
            return new FencedSchemaMigration(false);
        }
    }

    /** Boot's own test, where Boot has it: spring-boot-jdbc, a module of its own in Boot 4, may be absent. */
    private static boolean isEmbedded(DataSource dataSource) {
        String embedded = "org.springframework.boot.jdbc.EmbeddedDatabaseConnection";
        return ClassUtils.isPresent(embedded, FencedAutoConfiguration.class.getClassLoader())
                && EmbeddedDatabaseConnection.isEmbedded(dataSource);
    }

    /**
     * One line at start-up when the library's migrations are not all applied (read from its Flyway
     * history; without Flyway, the guard and counter tables are looked for), instead of a refusal or
     * an SQL error at the first fenced call.
     */
    private static void warnOfMissingTables(DataSource dataSource, boolean flyway) {
        try {
            String missing;
            if (flyway) {
                missing = String.join(", ", FencedSchema.pending(dataSource));
            } else {
                try (Connection connection = dataSource.getConnection()) {
                    missing = SchemaCheck.checkLibraryTables(connection).stream().map(SchemaCheck.Problem::toString)
                            .collect(Collectors.joining("; "));
                }
            }
            if (!missing.isEmpty()) {
                LOG.warn("fenced: the library's tables are not current in this database ({}); they are migrated at start-up only"
                        + " with fenced.schema.migrate=true (or apply the scripts in {})", missing, FencedSchema.SCRIPTS);
            }
        } catch (SQLException | RuntimeException e) {
            LOG.warn("fenced: could not check the library's tables: {}", e.getMessage());
        }
    }

    /** Boot's ordering of database initializers, imported where Boot's own auto-configurations have not. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer")
    @Import(DatabaseInitializationDependencyConfigurer.class)
    static class DatabaseInitializationOrder {
    }

    @Bean
    @ConditionalOnSingleCandidate(DataSource.class)
    @ConditionalOnMissingBean(TokenSource.class)
    @ConditionalOnProperty(name = "fenced.tokens", havingValue = "database")
    public TokenSource fencedTokenSource(DataSource dataSource) {
        return JdbcSequenceTokenSource.of(dataSource);
    }

    /** The epochs of {@code fenced.tokens=epochs}: Redis issues the tokens, in epochs from {@code fence_epoch_seq}. */
    @Bean
    @ConditionalOnSingleCandidate(DataSource.class)
    @ConditionalOnMissingBean(EpochSource.class)
    @ConditionalOnProperty(name = "fenced.tokens", havingValue = "epochs")
    public EpochSource fencedTokenEpochs(DataSource dataSource) {
        return JdbcSequenceTokenSource.epochs(dataSource);
    }

    @Bean
    @ConditionalOnSingleCandidate(DataSource.class)
    @ConditionalOnMissingBean(FenceFloor.class)
    @ConditionalOnProperty(name = "fenced.floor.table")
    public FenceFloor fencedFenceFloor(DataSource dataSource, FencedProperties properties) {
        FencedProperties.Floor floor = properties.getFloor();
        return JdbcFenceFloor.wholeTable(dataSource, FencedTable.builder(floor.getTable()).fenceColumn(floor.getFenceColumn()).build());
    }

    @Bean
    @ConditionalOnSingleCandidate(DataSource.class)
    @ConditionalOnMissingBean
    public FencedTransactions fencedTransactions(ObjectProvider<FencedObserver> observer) {
        return FencedTransactions.create().observedBy(observers(observer));
    }

    @Bean
    @ConditionalOnSingleCandidate(DataSource.class)
    @ConditionalOnMissingBean
    public SpringFencedTransactions springFencedTransactions(DataSource dataSource, FencedTransactions transactions) {
        return SpringFencedTransactions.of(dataSource, transactions);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty(name = "fenced.rows.table")
    public FencedRows fencedRows(FencedProperties properties, ObjectProvider<FencedObserver> observer) {
        FencedProperties.Rows rows = properties.getRows();
        FencedTable.Builder table = FencedTable.builder(rows.getTable()).idColumn(rows.getIdColumn())
                .stateColumn(rows.getStateColumn()).fenceColumn(rows.getFenceColumn())
                .states(rows.getPendingState(), rows.getClaimedState(), rows.getDoneState());
        if (rows.getScopeColumn() != null) {
            table.scopeColumn(rows.getScopeColumn());
        }
        return FencedRows.of(table.build()).observedBy(observers(observer));
    }

    /** The same fenced writes in the application's Spring transactions, on the connection bound to the thread. */
    @Bean
    @ConditionalOnSingleCandidate(DataSource.class)
    @ConditionalOnMissingBean
    @ConditionalOnProperty(name = "fenced.rows.table")
    public SpringFencedRows springFencedRows(DataSource dataSource, FencedRows rows) {
        return SpringFencedRows.of(dataSource, rows);
    }

    @Bean
    @ConditionalOnBean(LeaseStore.class)
    @ConditionalOnMissingBean
    public FencedExecutor fencedExecutor(LeaseStore store, FencedProperties properties, ObjectProvider<FencedObserver> observer) {
        return FencedExecutor.builder(store).ttl(properties.getLease().getTtl())
                .renewalFraction(properties.getLease().getRenewalFraction())
                .observer(observers(observer)).build();
    }

    /** The store on {@code fenced.redis.url}, on the application's Lettuce {@link ClientResources} when it has one. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "fenced.leases", havingValue = "redis", matchIfMissing = true)
    @ConditionalOnExpression("'${fenced.redis.url:}' != ''")
    static class LeaseStoreOnUrl {
        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(LeaseStore.class)
        RedisLeaseStore fencedLeaseStore(FencedProperties properties, ObjectProvider<FenceFloor> floor,
                                         ObjectProvider<TokenSource> tokens, ObjectProvider<EpochSource> epochs,
                                         ObjectProvider<FencedObserver> observer, ObjectProvider<ClientResources> resources) {
            RedisLeaseStore.Builder builder = RedisLeaseStore.builder(properties.getRedis().getUrl())
                    .commandTimeout(properties.getRedis().getCommandTimeout());
            // Boot's (or the application's) event loops and Lettuce metrics, shared rather than a second set of threads.
            resources.ifUnique(builder::clientResources);
            FencedProperties.Tls tls = properties.getRedis().getTls();
            RedisTls.fromSettings(tls.getCaFile(), tls.getCertFile(), tls.getKeyFile(), tls.getVerify(), "fenced.redis.tls.cert-file",
                    "fenced.redis.tls.key-file").ifPresent(builder::tls);
            return LeaseStores.configure(builder, properties, floor, tokens, epochs, observer).build();
        }
    }

    /** The store on a connection of its own, opened on the application's Spring Data Redis Lettuce client. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "fenced.leases", havingValue = "redis", matchIfMissing = true)
    @ConditionalOnClass(LettuceConnectionFactory.class)
    @ConditionalOnSingleCandidate(LettuceConnectionFactory.class)
    @ConditionalOnExpression("'${fenced.redis.url:}' == ''")
    static class LeaseStoreOnSpringRedis {
        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(LeaseStore.class)
        RedisLeaseStore fencedLeaseStore(LettuceConnectionFactory factory, FencedProperties properties,
                                         ObjectProvider<FenceFloor> floor, ObjectProvider<TokenSource> tokens,
                                         ObjectProvider<EpochSource> epochs, ObjectProvider<FencedObserver> observer) {
            AbstractRedisClient client = factory.getNativeClient();
            RedisLeaseStore.Builder builder;
            if (client instanceof RedisClusterClient cluster) {
                builder = RedisLeaseStore.builder(cluster);
            } else if (client instanceof RedisClient one) {
                builder = RedisLeaseStore.builder(one);
            } else {
                throw new IllegalStateException("fenced: the application's Redis client is a " + client.getClass().getSimpleName()
                        + "; set fenced.redis.url");
            }
            return LeaseStores.configure(builder, properties, floor, tokens, epochs, observer).build();
        }
    }

    /**
     * The store of {@code fenced.leases=database}, in the application's DataSource: no Redis class is
     * loaded for it, since the Redis stores' configurations are not even read without
     * {@code fenced.leases=redis}. Without a DataSource the application stops with the reason, rather
     * than starting without a lease store or an executor.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "fenced.leases", havingValue = "database")
    static class LeaseStoreInDatabase {
        @Bean
        @ConditionalOnMissingBean(LeaseStore.class)
        JdbcLeaseStore fencedLeaseStore(ObjectProvider<DataSource> dataSource, FencedProperties properties,
                                        ObjectProvider<FencedObserver> observer) {
            DataSource unique = dataSource.getIfUnique();
            if (unique == null) {
                throw new IllegalStateException("fenced.leases=database needs one DataSource bean (or a primary one); none was found");
            }
            if (properties.getTokens().equals("epochs")) {
                throw new IllegalStateException("fenced.tokens=epochs is for Redis leases: fenced.leases=database takes its tokens"
                        + " from fence_token_seq; remove fenced.tokens");
            }
            return JdbcLeaseStore.builder(unique).observer(observers(observer)).build();
        }
    }

    /**
     * {@link FencedLock} on the application's beans, through the {@link FencedExecutor} and the
     * guard of its transactions. An infrastructure advisor, as Spring's transaction advisor is, and
     * static with lazy lookups, so that making it early (auto-proxying does) makes nothing else early.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static FencedLockAdvisor fencedLockAdvisor(ObjectProvider<FencedExecutor> executor, ObjectProvider<SpringFencedTransactions> guard,
                                               ConfigurableBeanFactory beanFactory) {
        // Placeholders only: an EmbeddedValueResolver would also evaluate #{#account} now, without the call's arguments.
        return new FencedLockAdvisor(new FencedLockInterceptor(executor::getIfUnique, guard::getIfUnique, beanFactory::resolveEmbeddedValue));
    }

    /** Enters the guard of a transaction begun inside a {@link FencedLock} method; Boot adds it to its transaction manager. */
    @Bean
    @ConditionalOnMissingBean
    static FencedLockTransactions fencedLockTransactions() {
        return new FencedLockTransactions();
    }

    /**
     * Every {@link FencedObserver} bean, in their order, told in turn: the meters and an application's
     * own observers alike, so that adding one never switches another off.
     */
    static FencedObserver observers(ObjectProvider<FencedObserver> observers) {
        return FencedObserver.all(observers.orderedStream().toArray(FencedObserver[]::new));
    }

    /**
     * Meters in the application's registry, when Micrometer and fenced-micrometer are present, beside
     * any observer of the application's; a bean named {@code fencedMeters} replaces them.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({MeterRegistry.class, FencedMeters.class})
    @ConditionalOnBean(MeterRegistry.class)
    static class Metrics {
        @Bean
        @ConditionalOnMissingBean(name = "fencedMeters")
        FencedObserver fencedMeters(MeterRegistry registry) {
            return FencedMeters.in(registry);
        }
    }

    /**
     * Runs, acquisitions and refusals as Observations in the application's registry (Boot's actuator
     * makes one), which its handlers turn into spans and timers; off with
     * {@code fenced.observations.enabled=false}, replaced by a bean named {@code fencedObservations}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({ObservationRegistry.class, FencedObservations.class})
    @ConditionalOnBean(ObservationRegistry.class)
    @ConditionalOnProperty(name = "fenced.observations.enabled", havingValue = "true", matchIfMissing = true)
    static class Observations {
        @Bean
        @ConditionalOnMissingBean(name = "fencedObservations")
        FencedObserver fencedObservations(ObservationRegistry registry) {
            return FencedObservations.in(registry);
        }
    }
}
