package dev.fenced.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.Lease;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.jdbc.StaleTransactionException;
import dev.fenced.shedlock.FencedLockProvider;
import dev.fenced.shedlock.FencedShedLock;
import dev.fenced.spring.SpringFencedTransactions;
import dev.fenced.testing.servers.TestDatabases;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.UUID;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The ShedLock bridge through the starter: an application that keeps its {@code @SchedulerLock}
 * annotations gets the fenced provider, its task reads the token and enters its transaction's guard
 * with it, and a newer holder's entry makes the same write refused. What the pause does to a real
 * process is fenced-shedlock's {@code PausedShedLockTaskTest}.
 */
class ShedLockBridgeTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
                    TransactionAutoConfiguration.class, FencedAutoConfiguration.class,
                    FencedShedLockAutoConfiguration.class))
            .withPropertyValues("spring.datasource.url=" + TestDatabases.postgresUrl(), "fenced.leases=database",
                    "fenced.schema.migrate=true");

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
    static class SchedulerLockApplication {
    }

    /** A scheduled job as a team has it, plus the two lines that fence it. */
    public static class NightlyPosting {
        private final TransactionTemplate transactions;
        private final SpringFencedTransactions fences;

        public NightlyPosting(TransactionTemplate transactions, SpringFencedTransactions fences) {
            this.transactions = transactions;
            this.fences = fences;
        }

        @SchedulerLock(name = "nightly-posting")
        public Long post() {
            Lease lease = FencedShedLock.current().orElseThrow();
            return transactions.execute(status -> {
                fences.enter(lease.resource(), lease.token());
                // ... the job's writes: they commit only while no newer holder has entered
                return lease.token();
            });
        }
    }

    @Test
    void aSchedulerLockTaskRunsUnderAFencedLockAndItsStaleTransactionIsRefused() {
        String prefix = "shedlock-" + UUID.randomUUID().toString().substring(0, 8) + ":";
        runner.withUserConfiguration(SchedulerLockApplication.class).withBean(NightlyPosting.class)
                .withPropertyValues("fenced.shedlock.prefix=" + prefix).run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(LockProvider.class)).isInstanceOf(FencedLockProvider.class);
                    NightlyPosting job = context.getBean(NightlyPosting.class);
                    long first = job.post();
                    long second = job.post();
                    assertThat(second).as("each run takes the lock anew, with a higher token").isGreaterThan(first);

                    String resource = prefix + "nightly-posting";
                    long newer = JdbcSequenceTokenSource.of(context.getBean(DataSource.class)).nextToken(resource) + 1_000_000;
                    context.getBean(TransactionTemplate.class).executeWithoutResult(
                            status -> context.getBean(SpringFencedTransactions.class).enter(resource, newer));
                    assertThatThrownBy(job::post).as("a run whose token is below the newer holder's").isInstanceOf(StaleTransactionException.class);
                });
    }

    /** The README's compatibility row states the ShedLock this build ran the bridge on. */
    @Test
    void theReadmeStatesTheShedLockItRanOn() throws Exception {
        String row = Files.readAllLines(Path.of("..", "README.md")).stream().filter(line -> line.startsWith("| ShedLock |"))
                .findFirst().orElse("(no such row)");
        assertThat(row).contains(mavenVersion("shedlock-core") + " (`fenced-shedlock`")
                .contains("`shedlock-spring` " + mavenVersion("shedlock-spring") + " on Spring Boot " + SpringBootVersion.getVersion());
    }

    private static String mavenVersion(String artifact) throws IOException {
        String resource = "META-INF/maven/net.javacrumbs.shedlock/" + artifact + "/pom.properties";
        try (InputStream in = ShedLockBridgeTest.class.getClassLoader().getResourceAsStream(resource)) {
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version");
        }
    }

    @Test
    void anApplicationsOwnLockProviderWins() {
        LockProvider own = configuration -> java.util.Optional.empty();
        runner.withBean(LockProvider.class, () -> own).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(LockProvider.class)).isSameAs(own);
        });
    }

    @Test
    void withoutTheBridgeOnTheClassPathThereIsNoProvider() {
        runner.withClassLoader(new FilteredClassLoader(FencedLockProvider.class)).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(LockProvider.class);
        });
    }
}
