package dev.fenced.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.StaleTransactionException;
import dev.fenced.testing.servers.TestDatabases;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.UnexpectedRollbackException;
import org.springframework.transaction.support.TransactionTemplate;

/** Fenced transactions through Spring's TransactionTemplate and JdbcTemplate, against a real PostgreSQL. */
class SpringFencedTransactionsTest {
    private static HikariDataSource db;
    private static JdbcTemplate jdbc;
    private static TransactionTemplate transactions;
    private static SpringFencedTransactions fences;

    @BeforeAll
    static void open() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestDatabases.postgresUrl());
        config.setMaximumPoolSize(4);
        db = new HikariDataSource(config);
        FencedSchema.migrate(db);
        jdbc = new JdbcTemplate(db);
        jdbc.execute("CREATE TABLE IF NOT EXISTS fenced_spring_ledger (id BIGSERIAL PRIMARY KEY, resource VARCHAR(200) NOT NULL,"
                + " token BIGINT NOT NULL, note VARCHAR(40) NOT NULL)");
        transactions = new TransactionTemplate(new JdbcTransactionManager(db));
        fences = SpringFencedTransactions.of(db);
    }

    @AfterAll
    static void close() {
        if (db != null) {
            db.close();
        }
    }

    /** A holder's transaction: one ledger line written before entering, one after. */
    private static void holder(String resource, long token, String note, boolean guarded) {
        transactions.executeWithoutResult(status -> {
            jdbc.update("INSERT INTO fenced_spring_ledger (resource, token, note) VALUES (?, ?, ?)", resource, token, note);
            if (guarded) {
                fences.enter(resource, token);
            }
            jdbc.update("INSERT INTO fenced_spring_ledger (resource, token, note) VALUES (?, ?, ?)", resource, token, note);
        });
    }

    private static int lines(String resource, String note) {
        return jdbc.queryForObject("SELECT COUNT(*) FROM fenced_spring_ledger WHERE resource = ? AND note = ?", Integer.class, resource, note);
    }

    /** After the new holder's transaction committed, the old holder's is refused whole; with the guard off (control) it commits. */
    @ParameterizedTest(name = "guarded {0}")
    @ValueSource(booleans = {true, false})
    void aStaleHoldersSpringTransactionCommitsNothing(boolean guarded) {
        String resource = "spring:" + UUID.randomUUID();
        holder(resource, 33, "a-before", guarded);
        holder(resource, 34, "b", guarded);
        if (guarded) {
            assertThatThrownBy(() -> holder(resource, 33, "a-stale", true)).isInstanceOf(StaleTransactionException.class);
            assertThat(lines(resource, "a-stale")).isZero();
        } else {
            holder(resource, 33, "a-stale", false);
            assertThat(lines(resource, "a-stale")).as("control: the stale holder's lines commit").isEqualTo(2);
        }
        assertThat(lines(resource, "a-before")).isEqualTo(2);
        assertThat(lines(resource, "b")).isEqualTo(2);
    }

    /** A caller that swallows the refusal and returns normally still commits nothing: the transaction is rollback-only. */
    @Test
    void aSwallowedRefusalStillCommitsNothing() {
        String resource = "spring:" + UUID.randomUUID();
        holder(resource, 2, "new", true);
        assertThatThrownBy(() -> transactions.executeWithoutResult(status -> {
            jdbc.update("INSERT INTO fenced_spring_ledger (resource, token, note) VALUES (?, ?, ?)", resource, 1, "swallowed");
            try {
                fences.enter(resource, 1);
            } catch (StaleTransactionException ignored) {
                // the caller's mistake: it carries on
            }
            jdbc.update("INSERT INTO fenced_spring_ledger (resource, token, note) VALUES (?, ?, ?)", resource, 1, "swallowed");
        })).isInstanceOf(UnexpectedRollbackException.class);
        assertThat(lines(resource, "swallowed")).isZero();
    }

    @Test
    void outsideATransactionItSaysSo() {
        assertThatThrownBy(() -> fences.enter("spring:x", 1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("active Spring transaction");
    }
}
