package dev.fenced.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fenced.FencedExecutor;
import dev.fenced.FencedObserver;
import dev.fenced.LeaseStore;
import dev.fenced.LeaseView;
import dev.fenced.StoreUnavailableException;
import dev.fenced.TokenSource;
import dev.fenced.embedded.EmbeddedRedisCluster;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.FencedTransactions;
import dev.fenced.jdbc.JdbcLeaseStore;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.jdbc.StaleTransactionException;
import dev.fenced.jdbc.UnsupportedDatabaseException;
import dev.fenced.micrometer.FencedMeters;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.spring.FencedContext;
import dev.fenced.spring.FencedLock;
import dev.fenced.spring.SpringFencedRows;
import dev.fenced.spring.SpringFencedTransactions;
import dev.fenced.sample.LedgerJob;
import dev.fenced.sample.SampleApplication;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import dev.fenced.testing.servers.TlsRedis;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

/** The starter against the real Redis and PostgreSQL: what it wires, from which properties, and what it refuses. */
@ExtendWith(OutputCaptureExtension.class)
class FencedAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, FencedAutoConfiguration.class))
            .withPropertyValues("spring.datasource.url=" + TestDatabases.postgresUrl(), "fenced.schema.migrate=true");

    @Test
    void theSampleApplicationRunsItsFencedJobOnSpringsRedisClientWithHealthAndMeters() {
        String account = "acct_" + UUID.randomUUID().toString().substring(0, 8);
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(SampleApplication.class)
                .properties("spring.datasource.url=" + TestDatabases.postgresUrl(), "spring.data.redis.url=" + TestRedis.uri(),
                        "sample.account=" + account, "fenced.redis.url=")
                .run()) {
            assertThat(context.getBean(LeaseStore.class)).isInstanceOf(RedisLeaseStore.class);
            assertThat(context.getBeansOfType(FencedTransactions.class)).hasSize(1);
            assertThat(context.getBeansOfType(SpringFencedTransactions.class)).hasSize(1);

            FencedExecutor.Outcome<Long> outcome = context.getBean(LedgerJob.class).post();
            assertThat(outcome.status()).isEqualTo(FencedExecutor.Status.EXECUTED);
            assertThat(context.getBean(JdbcTemplate.class).queryForObject(
                    "SELECT token FROM sample_ledger WHERE account = ?", Long.class, account)).isEqualTo(outcome.token());

            FencedHealthIndicator health = context.getBean(FencedHealthIndicator.class);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            assertThat(health.health().getDetails().get("store").toString()).doesNotContain("password");

            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.get(FencedMeters.ACQUIRE).tag("outcome", "granted").timer().count()).isGreaterThanOrEqualTo(1);
            assertThat(registry.get(FencedMeters.RUNS).tag("status", "executed").timer().count()).isEqualTo(1);
        }
    }

    @Test
    void onItsOwnUrlWithDatabaseTokensAndAWorkTable() {
        runner.withPropertyValues("fenced.redis.url=" + TestRedis.uri(), "fenced.tokens=database", "fenced.redis.key-prefix=boot:",
                        "fenced.rows.table=refund_like", "fenced.rows.scope-column=merchant")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(TokenSource.class)).isInstanceOf(JdbcSequenceTokenSource.class);
                    RedisLeaseStore store = context.getBean(RedisLeaseStore.class);
                    assertThat(store.keys().prefix()).isEqualTo("boot:");
                    FencedExecutor executor = context.getBean(FencedExecutor.class);
                    String resource = "boot:" + UUID.randomUUID();
                    long first = executor.execute(resource, lease -> lease.token()).orThrow();
                    long second = executor.execute(resource, lease -> lease.token()).orThrow();
                    assertThat(second).as("tokens from the sequence grow").isGreaterThan(first);
                    assertThat(context.getBean(FencedRows.class).table().scopeColumn()).contains("merchant");
                    assertThat(context.getBean(SpringFencedRows.class).rows()).isSameAs(context.getBean(FencedRows.class));
                });
    }

    @Test
    void withTokenEpochsTokensAreInAnEpochFromTheDatabase() {
        runner.withPropertyValues("fenced.redis.url=" + TestRedis.uri(), "fenced.tokens=epochs").run(context -> {
            assertThat(context).hasNotFailed();
            FencedExecutor executor = context.getBean(FencedExecutor.class);
            String resource = "boot:" + UUID.randomUUID();
            long first = executor.execute(resource, lease -> lease.token()).orThrow();
            long second = executor.execute(resource, lease -> lease.token()).orThrow();
            assertThat(first >>> 24).as("an epoch from fence_epoch_seq").isPositive();
            assertThat(second).isEqualTo(first + 1);
        });
        runner.withPropertyValues("fenced.redis.url=" + TestRedis.uri(), "fenced.tokens=epochs", "fenced.floor.table=refund_like")
                .run(context -> assertThat(context).getFailure().hasStackTraceContaining("fenced.tokens=epochs replaces the fence floor"));
        runner.withPropertyValues("fenced.redis.url=" + TestRedis.uri(), "fenced.tokens=epoch")
                .run(context -> assertThat(context).getFailure().hasStackTraceContaining("must be redis, epochs or database, got epoch"));
    }

    @Test
    void withoutRedisThereIsNoStoreButTheDatabaseFencesAreThere() {
        runner.withPropertyValues("fenced.redis.url=").run(context -> { // FENCED_REDIS_URL, set for the tests, would bind to it
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(LeaseStore.class);
            assertThat(context).doesNotHaveBean(FencedExecutor.class);
            assertThat(context).hasSingleBean(FencedTransactions.class);
        });
    }

    /**
     * fenced.leases=database: an application with only a DataSource gets the store, the executor and
     * the fences, with Spring Data Redis and Lettuce hidden from the conditions and fenced.redis.url set
     * (FENCED_REDIS_URL) all the same: the Redis stores' configurations are not read.
     */
    @Test
    void withDatabaseLeasesAnApplicationWithOnlyADataSourceGetsTheWholeStarter() {
        runner.withClassLoader(new FilteredClassLoader("io.lettuce", "org.springframework.data.redis"))
                .withPropertyValues("fenced.leases=database", "fenced.redis.url=" + TestRedis.uri()).run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(LeaseStore.class);
                    assertThat(context.getBean(LeaseStore.class)).isInstanceOf(JdbcLeaseStore.class);
                    assertThat(context).hasSingleBean(FencedTransactions.class);
                    FencedExecutor executor = context.getBean(FencedExecutor.class);
                    String resource = "boot:" + UUID.randomUUID();
                    long first = executor.execute(resource, lease -> lease.token()).orThrow();
                    long second = executor.execute(resource, lease -> lease.token()).orThrow();
                    assertThat(second).isGreaterThan(first);
                    LeaseView view = context.getBean(LeaseStore.class).view(resource);
                    assertThat(view.held()).as("released after each run").isFalse();
                    assertThat(view.highestTokenIssued()).as("kept in fence_lease").isEqualTo(second);
                    assertThat(new FencedHealthIndicator(context.getBean(LeaseStore.class)).health().getStatus())
                            .as("the database answers the health probe").isEqualTo(Status.UP);
                });
        runner.withPropertyValues("fenced.leases=postgres").run(context ->
                assertThat(context).getFailure().hasStackTraceContaining("fenced.leases must be redis or database, got postgres"));
        runner.withPropertyValues("fenced.leases=database", "fenced.tokens=epochs").run(context ->
                assertThat(context).getFailure().hasStackTraceContaining("fenced.tokens=epochs is for Redis leases"));
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(FencedAutoConfiguration.class))
                .withPropertyValues("fenced.leases=database").run(context ->
                        assertThat(context).getFailure().hasStackTraceContaining("fenced.leases=database needs one DataSource bean"));
    }

    /** On its own URL, the store runs on the application's Lettuce resources: its commands reach their latency recorder. */
    @Test
    void onItsOwnUrlTheStoreSharesTheApplicationsClientResources() {
        AtomicInteger recorded = new AtomicInteger();
        CommandLatencyRecorder recorder = new CommandLatencyRecorder() {
            @Override
            public void recordCommandLatency(SocketAddress local, SocketAddress remote, ProtocolKeyword commandType,
                                             long firstResponseLatency, long completionLatency) {
                recorded.incrementAndGet();
            }
        };
        ClientResources resources = DefaultClientResources.builder().commandLatencyRecorder(recorder).build();
        try {
            runner.withBean(ClientResources.class, () -> resources).withPropertyValues("fenced.redis.url=" + TestRedis.uri())
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        context.getBean(FencedExecutor.class).execute("boot:" + UUID.randomUUID(), lease -> lease.token()).orThrow();
                        assertThat(recorded).as("the store's commands, timed by the application's resources").hasPositiveValue();
                    });
        } finally {
            resources.shutdown();
        }
    }

    /** An application's annotated job, proxied by the starter's advisor. */
    public static class AnnotatedJob {
        @FencedLock(resource = "${job.prefix:boot}:#{#name}")
        public String resource(String name) {
            return FencedContext.current().orElseThrow().resource();
        }
    }

    /** @FencedLock through the starter: ${...} from the environment once, #{...} from each call's arguments. */
    @Test
    void anAnnotatedMethodRunsUnderTheLeaseItsArgumentsAndSettingsName() {
        runner.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class)).withBean(AnnotatedJob.class)
                .withPropertyValues("fenced.redis.url=" + TestRedis.uri(), "job.prefix=nightly").run(context -> {
                    assertThat(context).hasNotFailed();
                    AnnotatedJob job = context.getBean(AnnotatedJob.class);
                    assertThat(job.resource("a")).isEqualTo("nightly:a");
                    assertThat(job.resource("b")).as("evaluated per call, not once").isEqualTo("nightly:b");
                });
    }

    /** An application's job that is both @Transactional and @FencedLock. */
    public static class TransactionalJob {
        private final AtomicInteger bodies = new AtomicInteger();

        @Transactional
        @FencedLock(resource = "boot-tx:#{#name}")
        public Long run(String name) {
            bodies.incrementAndGet();
            return FencedContext.token();
        }

        public int bodies() {
            return bodies.get();
        }
    }

    /**
     * Through the starter, the advisor runs inside @Transactional: the transaction begins, then the
     * lease and the guard, so a stale token is refused before the method's body runs.
     */
    @Test
    void onAMethodThatIsAlsoTransactionalARefusalComesBeforeTheBody() {
        runner.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
                        TransactionAutoConfiguration.class)).withBean(TransactionalJob.class)
                .withPropertyValues("fenced.leases=database").run(context -> {
                    assertThat(context).hasNotFailed();
                    TransactionalJob job = context.getBean(TransactionalJob.class);
                    String name = UUID.randomUUID().toString();
                    assertThat(job.run(name)).isPositive();
                    long newer = JdbcSequenceTokenSource.of(context.getBean(DataSource.class)).nextToken("boot-tx:" + name) + 1_000_000;
                    context.getBean(TransactionTemplate.class).executeWithoutResult(
                            status -> context.getBean(SpringFencedTransactions.class).enter("boot-tx:" + name, newer));
                    int bodies = job.bodies();
                    assertThatThrownBy(() -> job.run(name)).isInstanceOf(StaleTransactionException.class);
                    assertThat(job.bodies()).as("refused before the body ran").isEqualTo(bodies);
                });
    }

    /** fenced.enabled=false: the application starts as if fenced were not on its class path. */
    @Test
    void switchedOffItWiresNothing() {
        runner.withPropertyValues("fenced.redis.url=" + TestRedis.uri(), "fenced.enabled=false").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(FencedProperties.class).doesNotHaveBean(LeaseStore.class)
                    .doesNotHaveBean(FencedTransactions.class).doesNotHaveBean(FencedExecutor.class);
        });
    }

    /**
     * An application's own observer and the meters both hear every run: before, the meters backed off
     * when the application defined any FencedObserver, and two observers stopped the start.
     */
    @Test
    void anApplicationsOwnObserverAndTheMetersBothHearEveryRun() {
        AtomicInteger heardByTheApplication = new AtomicInteger();
        FencedObserver audit = new FencedObserver() {
            @Override
            public void acquired(String resource, AcquireOutcome outcome, long token, Duration took) {
                if (outcome == AcquireOutcome.GRANTED) {
                    heardByTheApplication.incrementAndGet();
                }
            }
        };
        runner.withBean(SimpleMeterRegistry.class).withBean("audit", FencedObserver.class, () -> audit)
                .withPropertyValues("fenced.redis.url=" + TestRedis.uri()).run(context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean(FencedExecutor.class).execute("boot:" + UUID.randomUUID(), lease -> lease.token()).orThrow();
                    assertThat(heardByTheApplication).hasValue(1);
                    assertThat(context.getBean(MeterRegistry.class).get(FencedMeters.ACQUIRE).tag("outcome", "granted").timer().count())
                            .isEqualTo(1);
                });
    }

    /**
     * Two DataSources and neither primary: the database beans back off (which one would they fence?)
     * instead of failing the start; with one marked primary, they take that one.
     */
    @Test
    void twoDataSourcesWithoutAPrimaryLeaveTheDatabaseBeansOutInsteadOfFailing() {
        ApplicationContextRunner twoDataSources = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(FencedAutoConfiguration.class))
                .withPropertyValues("fenced.redis.url=" + TestRedis.uri());
        twoDataSources.withBean("orders", DataSource.class, () -> new DriverManagerDataSource(TestDatabases.postgresUrl()))
                .withBean("reports", DataSource.class, () -> new DriverManagerDataSource(TestDatabases.postgresUrl()))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(FencedTransactions.class).doesNotHaveBean(SpringFencedTransactions.class);
                    assertThat(context).hasSingleBean(FencedExecutor.class);
                });
        twoDataSources.withBean("orders", DataSource.class, () -> new DriverManagerDataSource(TestDatabases.postgresUrl()),
                        definition -> definition.setPrimary(true))
                .withBean("reports", DataSource.class, () -> new DriverManagerDataSource(TestDatabases.postgresUrl()))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(SpringFencedTransactions.class);
                });
    }

    /**
     * An H2 DataSource, as many @SpringBootTests have: the application starts, says in one line why
     * the library's tables were not made, and a fenced transaction there is refused with the reason.
     */
    @Test
    void onH2TheApplicationStartsAndAFencedWriteSaysWhyNot(CapturedOutput output) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
                        TransactionAutoConfiguration.class, FencedAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=jdbc:h2:mem:fenced_" + UUID.randomUUID(), "fenced.redis.url=" + TestRedis.uri())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(output).contains("fenced: the library's tables were not migrated, unsupported database 'H2");
                    SpringFencedTransactions fences = context.getBean(SpringFencedTransactions.class);
                    TransactionTemplate transactions = context.getBean(TransactionTemplate.class);
                    assertThatThrownBy(() -> transactions.executeWithoutResult(status -> fences.enter("boot:h2", 1)))
                            .isInstanceOf(UnsupportedDatabaseException.class);
                });
    }

    @Test
    void badSettingsStopTheApplicationWithTheReason() {
        runner.withPropertyValues("fenced.redis.url=" + TestRedis.uri(), "fenced.lease.ttl=0s").run(context ->
                assertThat(context).hasFailed().getFailure().rootCause().hasMessageContaining("TTL"));
        runner.withPropertyValues("fenced.redis.url=redis://:s3cret@127.0.0.1:1").run(context -> {
            assertThat(context).hasFailed();
            Throwable unavailable = context.getStartupFailure();
            while (unavailable != null && !(unavailable instanceof StoreUnavailableException)) {
                unavailable = unavailable.getCause();
            }
            assertThat(unavailable).as("a StoreUnavailableException in the cause chain").isNotNull();
            assertThat(unavailable.getMessage()).contains("127.0.0.1:1");
            for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
                assertThat(t.getMessage()).as("no password in any message").doesNotContain("s3cret");
            }
        });
        runner.withPropertyValues("fenced.rows.table=refund; DROP TABLE x").run(context ->
                assertThat(context).hasFailed().getFailure().rootCause().isInstanceOf(IllegalArgumentException.class));
    }

    @Test
    void everyPropertyIsDescribedInSpringsConfigurationMetadata() throws Exception {
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            JsonNode metadata = new ObjectMapper().readTree(in);
            assertThat(metadata.get("properties")).extracting(p -> p.get("name").asText())
                    .contains("fenced.redis.url", "fenced.lease.ttl", "fenced.lease.renewal-fraction", "fenced.tokens",
                            "fenced.floor.table", "fenced.rows.table", "fenced.schema.migrate", "fenced.leases", "fenced.enabled",
                            "fenced.observations.enabled", "fenced.shedlock.prefix",
                            "management.health.fenced.enabled");
            for (JsonNode property : metadata.get("properties")) {
                assertThat(property.has("description")).as(property.get("name").asText() + " has a description").isTrue();
            }
        }
    }

    @Test
    void onATlsUrlWithTheTlsProperties() {
        try (TlsRedis redis = TlsRedis.start(null)) {
            runner.withPropertyValues("fenced.redis.url=" + redis.uri(), "fenced.redis.tls.ca-file=" + redis.caCertificate(),
                    "fenced.redis.tls.cert-file=" + redis.clientCertificate(), "fenced.redis.tls.key-file=" + redis.clientKey())
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(context.getBean(FencedExecutor.class).execute("boot:tls", lease -> lease.token()).status())
                                .isEqualTo(FencedExecutor.Status.EXECUTED);
                    });
            runner.withPropertyValues("fenced.redis.url=" + redis.uri(), "fenced.redis.tls.ca-file=" + redis.otherCaCertificate(),
                    "fenced.redis.tls.cert-file=" + redis.clientCertificate(), "fenced.redis.tls.key-file=" + redis.clientKey())
                    .run(context -> assertThat(context).hasFailed().getFailure().hasStackTraceContaining("TLS with Redis at " + redis.uri()));
            runner.withPropertyValues("fenced.redis.url=" + redis.uri(), "fenced.redis.tls.cert-file=" + redis.clientCertificate())
                    .run(context -> assertThat(context).hasFailed().getFailure().rootCause().hasMessageContaining("go together"));
        }
    }

    /** Spring Data Redis on a cluster: the store opens a cluster connection on Spring's cluster client. */
    @Test
    void onSpringsClusterClient() {
        try (EmbeddedRedisCluster cluster = EmbeddedRedisCluster.start();
             ConfigurableApplicationContext context = new SpringApplicationBuilder(SampleApplication.class)
                     .properties("spring.datasource.url=" + TestDatabases.postgresUrl(), "fenced.redis.url=",
                             "spring.data.redis.cluster.nodes=" + cluster.ports().stream().map(port -> "127.0.0.1:" + port)
                                     .collect(java.util.stream.Collectors.joining(",")))
                     .run()) {
            FencedExecutor executor = context.getBean(FencedExecutor.class);
            for (int i = 0; i < 10; i++) { // ten resources over the three primaries
                long first = executor.execute("boot:cluster:" + i, lease -> lease.token()).orThrow();
                long second = executor.execute("boot:cluster:" + i, lease -> lease.token()).orThrow();
                assertThat(second).isGreaterThan(first); // the sample's floor (fence_guard) reseeds each new counter above its fences
            }
            assertThat(context.getBean(FencedHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
        }
    }
}
