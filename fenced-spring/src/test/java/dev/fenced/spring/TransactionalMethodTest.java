package dev.fenced.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.StaleTransactionException;
import dev.fenced.testing.servers.TestDatabases;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

/** A {@code @Transactional} method of a Spring bean (a proxy, as in an application), against a real PostgreSQL. */
class TransactionalMethodTest {
    private static HikariDataSource db;
    private static AnnotationConfigApplicationContext context;

    /** An application's service: one ledger line per call, fenced under the caller's token. */
    public static class Ledger {
        private final JdbcTemplate jdbc;
        private final SpringFencedTransactions fences;
        private final boolean guarded;

        Ledger(DataSource dataSource, boolean guarded) {
            this.jdbc = new JdbcTemplate(dataSource);
            this.fences = SpringFencedTransactions.of(dataSource);
            this.guarded = guarded;
        }

        @Transactional
        public void write(String resource, long token, String note) {
            if (guarded) {
                fences.enter(resource, token);
            }
            jdbc.update("INSERT INTO fenced_spring_ledger (resource, token, note) VALUES (?, ?, ?)", resource, token, note);
        }

        int lines(String resource, String note) {
            return jdbc.queryForObject("SELECT COUNT(*) FROM fenced_spring_ledger WHERE resource = ? AND note = ?", Integer.class, resource, note);
        }
    }

    @Configuration
    @EnableTransactionManagement
    static class Application {
        @Bean
        PlatformTransactionManager transactionManager() {
            return new JdbcTransactionManager(db);
        }

        @Bean
        Ledger guarded() {
            return new Ledger(db, true);
        }

        @Bean
        Ledger unguarded() {
            return new Ledger(db, false);
        }
    }

    @BeforeAll
    static void start() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestDatabases.postgresUrl());
        config.setMaximumPoolSize(4);
        db = new HikariDataSource(config);
        FencedSchema.migrate(db);
        new JdbcTemplate(db).execute("CREATE TABLE IF NOT EXISTS fenced_spring_ledger (id BIGSERIAL PRIMARY KEY, resource VARCHAR(200) NOT NULL,"
                + " token BIGINT NOT NULL, note VARCHAR(40) NOT NULL)");
        context = new AnnotationConfigApplicationContext(Application.class);
    }

    @AfterAll
    static void stop() {
        if (context != null) {
            context.close();
        }
        if (db != null) {
            db.close();
        }
    }

    /** After the newer token's call committed, the older token's call commits nothing; the unguarded bean (control) commits it. */
    @Test
    void aStaleCallerOfATransactionalMethodCommitsNothing() {
        Ledger guarded = context.getBean("guarded", Ledger.class);
        Ledger unguarded = context.getBean("unguarded", Ledger.class);
        String resource = "spring-tx:" + UUID.randomUUID();
        guarded.write(resource, 33, "a");
        guarded.write(resource, 34, "b");
        assertThatThrownBy(() -> guarded.write(resource, 33, "a-stale")).isInstanceOf(StaleTransactionException.class);
        assertThat(guarded.lines(resource, "a-stale")).isZero();

        unguarded.write(resource, 33, "control-stale");
        assertThat(unguarded.lines(resource, "control-stale")).as("control: without the guard the stale call commits").isEqualTo(1);
    }
}
