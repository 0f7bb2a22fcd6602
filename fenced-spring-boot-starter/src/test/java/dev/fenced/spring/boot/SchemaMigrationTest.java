package dev.fenced.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.jdbc.FencedSchema;
import dev.fenced.testing.servers.OwnDatabase;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Boot's conventions for the library's tables: made at start-up only where Boot itself would make
 * schema (embedded databases) or on {@code fenced.schema.migrate=true}, and ordered as a database
 * initializer, so that beans that depend on initialization are made after them. Each on an empty
 * PostgreSQL database of its own.
 */
@ExtendWith(OutputCaptureExtension.class)
class SchemaMigrationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, FencedAutoConfiguration.class))
            .withPropertyValues("fenced.redis.url=" + TestRedis.uri());

    @Test
    void aDatabaseThatIsNotEmbeddedIsLeftAsItIsUnlessAskedAndTheLogSaysSo(CapturedOutput output) {
        try (OwnDatabase database = OwnDatabase.on(TestDatabases.postgresUrl())) {
            runner.withPropertyValues("spring.datasource.url=" + database.url()).run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(FencedSchemaMigration.class).migrated()).isFalse();
                assertThat(hasGuardTable(context.getBean(DataSource.class))).isFalse();
            });
            assertThat(output).contains("fenced: the library's tables are not current in this database (V1 ")
                    .contains("V7 fence lease").contains("only with fenced.schema.migrate=true");

            runner.withPropertyValues("spring.datasource.url=" + database.url(), "fenced.schema.migrate=true").run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(FencedSchemaMigration.class).migrated()).isTrue();
                assertThat(hasGuardTable(context.getBean(DataSource.class))).isTrue();
            });
        }
    }

    @Test
    void falseMeansNeverAndNoBean() {
        try (OwnDatabase database = OwnDatabase.on(TestDatabases.postgresUrl())) {
            runner.withPropertyValues("spring.datasource.url=" + database.url(), "fenced.schema.migrate=false").run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(context).doesNotHaveBean(FencedSchemaMigration.class);
                assertThat(hasGuardTable(context.getBean(DataSource.class))).isFalse();
            });
        }
    }

    /** An application's bean that reads the library's tables as it is made. */
    @DependsOnDatabaseInitialization
    public static class ReadsTheGuardTableAtStart {
        final boolean sawIt;

        public ReadsTheGuardTableAtStart(DataSource dataSource) {
            this.sawIt = hasGuardTable(dataSource);
        }
    }

    /** The same bean without the annotation: the control, which Boot does not order after initialization. */
    public static class UnorderedReader {
        public UnorderedReader(DataSource dataSource) {
            hasGuardTable(dataSource);
        }
    }

    @Test
    void beansThatDependOnDatabaseInitializationAreMadeAfterTheMigration() {
        try (OwnDatabase database = OwnDatabase.on(TestDatabases.postgresUrl())) {
            runner.withPropertyValues("spring.datasource.url=" + database.url(), "fenced.schema.migrate=true")
                    .withBean("reader", ReadsTheGuardTableAtStart.class).withBean("control", UnorderedReader.class)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(context.getBeanFactory().getBeanDefinition("reader").getDependsOn())
                                .as("Boot's ordering, told by FencedSchemaMigrationDetector").contains("fencedSchemaMigration");
                        assertThat(context.getBean("reader", ReadsTheGuardTableAtStart.class).sawIt).isTrue();
                        assertThat(context.getBeanFactory().getBeanDefinition("control").getDependsOn())
                                .as("control: a bean that does not ask waits for nothing").isNullOrEmpty();
                    });
        }
    }

    private static boolean hasGuardTable(DataSource dataSource) {
        try (Connection connection = dataSource.getConnection();
             ResultSet tables = connection.getMetaData().getTables(null, null, FencedSchema.GUARD_TABLE, null)) {
            return tables.next();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
