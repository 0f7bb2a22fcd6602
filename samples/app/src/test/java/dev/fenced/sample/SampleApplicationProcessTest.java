package dev.fenced.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fenced.FencedExecutor;
import dev.fenced.testing.servers.JavaProcess;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.SpringVersion;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The sample application, configured by the starter's properties alone, as two real holders: A
 * is a separate JVM frozen with SIGSTOP after it took the lease (its renewals freeze with it) and
 * until the lease expired and B, this test's application, posted under the next token. Resumed, A
 * writes: with the fence the database refuses it (A's run ends FENCED_OUT and nothing of it is
 * committed); the control without the fence commits A's stale line beside B's. Each for the job on
 * the executor ({@link LedgerJob}) and on {@code @FencedLock} ({@link AnnotatedLedgerJob}, whose
 * transaction begins inside the method and enters the guard as it begins).
 */
class SampleApplicationProcessTest {

    /**
     * What this build's class path holds: Boot's managed versions, not fenced's. The README's
     * compatibility table states them; a Boot upgrade that changes one fails here until it is updated.
     */
    @BeforeAll
    static void theReadmeStatesTheVersionsThisSampleRunsOn() throws IOException, ClassNotFoundException {
        String ran = String.format("Boot %s: Spring Framework %s, Lettuce %s, Netty %s, Flyway %s, PostgreSQL JDBC %s",
                SpringBootVersion.getVersion(), SpringVersion.getVersion(), mavenVersion("io.lettuce", "lettuce-core"),
                mavenVersion("io.netty", "netty-common"), mavenVersion("org.flywaydb", "flyway-core"),
                Class.forName("org.postgresql.Driver").getPackage().getImplementationVersion()) // its jar has no pom.properties
                .replace(".RELEASE", "").replace(".Final", "");
        System.out.println("sample on Spring " + ran);
        String row = Files.readAllLines(Path.of("../../README.md")).stream()
                .filter(line -> line.startsWith("| Spring Boot applications ")).findFirst().orElse("(no such row)");
        assertThat(row).as("the README's compatibility row for Spring Boot applications").contains(ran);
    }

    private static String mavenVersion(String group, String artifact) throws IOException {
        String resource = "META-INF/maven/" + group + "/" + artifact + "/pom.properties";
        try (var in = SampleApplicationProcessTest.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                return "(not on the class path)";
            }
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version");
        }
    }

    @ParameterizedTest(name = "{0}, fenced={1}")
    @CsvSource({"executor, true", "executor, false", "annotation, true", "annotation, false"})
    void aHolderPausedPastItsTtlCannotCommit(String job, boolean fenced) throws Exception {
        String account = "acct_" + UUID.randomUUID().toString().substring(0, 8);
        Map<String, String> settings = Map.of(
                "spring.datasource.url", TestDatabases.postgresUrl(),
                "spring.data.redis.url", TestRedis.uri(),
                "fenced.redis.url", "", // FENCED_REDIS_URL, set for the tests, would bind to it: the sample takes Spring's client
                "fenced.lease.ttl", "1500ms",
                "sample.account", account,
                "sample.job", job,
                "sample.fenced", Boolean.toString(fenced));

        List<String> args = new ArrayList<>();
        settings.forEach((key, value) -> args.add("--" + key + "=" + value));
        args.add("--sample.hold-before-write=true");
        try (JavaProcess a = JavaProcess.start(SampleApplication.class, args)) {
            String holding = a.awaitLine("HOLDING ");
            long tokenA = Long.parseLong(holding.substring("HOLDING ".length()).trim());
            a.stop();
            try (ConfigurableApplicationContext b = new SpringApplicationBuilder(SampleApplication.class)
                    .properties(settings.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toArray(String[]::new))
                    .run()) {
                // A's lease is live until its TTL runs out by Redis's clock, which no test can move: B posts until it is not busy.
                Long tokenB = await("A's lease expired in Redis and B took over").atMost(Duration.ofSeconds(20))
                        .pollInterval(Duration.ofMillis(100)).until(() -> post(b, job, account, fenced), Objects::nonNull);
                assertThat(tokenB).as("B took over with a newer token").isGreaterThan(tokenA);
                assertThat(healthOf(b.getBean("fencedHealthIndicator"))).as("/actuator/health/fenced while A is frozen").isEqualTo("UP");

                a.resume();
                a.tell("go");
                int exit = a.awaitExit(Duration.ofSeconds(60));
                String outcome = a.awaitLine("OUTCOME ");
                JdbcTemplate jdbc = b.getBean(JdbcTemplate.class);
                List<Long> tokens = jdbc.queryForList("SELECT token FROM sample_ledger WHERE account = ? ORDER BY id", Long.class, account);
                if (fenced) {
                    assertThat(outcome).isEqualTo("OUTCOME FENCED_OUT " + tokenA);
                    assertThat(exit).isEqualTo(3);
                    assertThat(tokens).as("only B's line: A's stale transaction was refused").containsExactly(tokenB);
                } else {
                    assertThat(outcome).isEqualTo("OUTCOME EXECUTED " + tokenA);
                    assertThat(tokens).as("control: A's stale line committed beside B's").containsExactly(tokenB, tokenA);
                }
            }
        }
    }

    /** B's run of the job A runs: its token, or null while A's lease is live. */
    private static Long post(ConfigurableApplicationContext b, String job, String account, boolean fenced) {
        if (job.equals("annotation")) {
            AnnotatedLedgerJob annotated = b.getBean(AnnotatedLedgerJob.class);
            return fenced ? annotated.post(account) : annotated.postUnfenced(account);
        }
        FencedExecutor.Outcome<Long> outcome = b.getBean(LedgerJob.class).post();
        return outcome.status() == FencedExecutor.Status.BUSY ? null : outcome.orThrow();
    }

    /** The indicator's status code, read by reflection: Boot 3 and Boot 4 keep their health types in different packages. */
    private static String healthOf(Object indicator) throws ReflectiveOperationException {
        Object health = indicator.getClass().getMethod("health").invoke(indicator);
        Object status = health.getClass().getMethod("getStatus").invoke(health);
        return (String) status.getClass().getMethod("getCode").invoke(status);
    }
}
