package dev.fenced.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FenceViolation;
import dev.fenced.FencedException;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.FencedTable;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.UnexpectedRollbackException;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link SpringFencedRows} in real Spring transactions (DataSourceTransactionManager and
 * TransactionTemplate) on a real database, against FencedRows' DataSource overloads, which take a
 * second connection. One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SpringFencedRowsContract {
    private final String table = "fenced_spring_rows_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private HikariDataSource db;
    private HikariDataSource manualCommitDb;
    private JdbcTemplate jdbc;
    private TransactionTemplate transactions;
    private FencedRows rows;
    private SpringFencedRows springRows;

    /** A JDBC URL of the database under test. */
    protected abstract String jdbcUrl();

    /** Makes a connection wait at most a second for a row lock, so that a wait shows as an error rather than a hang. */
    protected abstract String shortLockWait();

    @BeforeAll
    void open() {
        db = pool(false);
        manualCommitDb = pool(true);
        jdbc = new JdbcTemplate(db);
        jdbc.execute("CREATE TABLE " + table + " (id VARCHAR(64) PRIMARY KEY, state VARCHAR(16) NOT NULL,"
                + " fence BIGINT NOT NULL DEFAULT 0, note VARCHAR(40))");
        transactions = new TransactionTemplate(new DataSourceTransactionManager(db));
        rows = FencedRows.of(FencedTable.builder(table).states("pending", "sending", "sent").build());
        springRows = SpringFencedRows.of(db, rows);
    }

    private HikariDataSource pool(boolean manualCommit) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setMaximumPoolSize(4);
        config.setConnectionInitSql(shortLockWait());
        config.setAutoCommit(!manualCommit);
        return new HikariDataSource(config);
    }

    @AfterAll
    void close() {
        if (db == null) {
            return; // the database was not configured and the class was skipped
        }
        jdbc.execute("DROP TABLE " + table);
        manualCommitDb.close();
        db.close();
    }

    private String pendingRow() {
        String id = "r_" + UUID.randomUUID().toString().substring(0, 8);
        jdbc.update("INSERT INTO " + table + " (id, state, fence) VALUES (?, 'pending', 0)", id);
        return id;
    }

    /** State, fence and note as another connection sees them: only what was committed. */
    private Map<String, Object> committed(String id) {
        return jdbc.queryForMap("SELECT state, fence, note FROM " + table + " WHERE id = ?", id);
    }

    /**
     * The transaction has written the row (and holds its lock) before it claims it: the claim runs on
     * the same connection, and claim and note commit together. Control: FencedRows' DataSource
     * overload takes a second connection, which waits on the first's row lock until it gives up.
     */
    @ParameterizedTest(name = "second connection: {0}")
    @ValueSource(booleans = {false, true})
    void aClaimInsideATransactionUsesItsConnection(boolean control) {
        String id = pendingRow();
        Throwable thrown = null;
        try {
            transactions.executeWithoutResult(status -> {
                jdbc.update("UPDATE " + table + " SET note = 'checked' WHERE id = ?", id);
                if (control) {
                    rows.claim(db, id, 7);
                } else {
                    springRows.claim(id, 7);
                }
            });
        } catch (RuntimeException e) {
            thrown = e;
        }
        if (control) {
            assertThat(thrown).as("control: the second connection waits on the first's lock").isInstanceOf(FencedException.class);
            assertThat(committed(id)).containsEntry("state", "pending");
            return;
        }
        assertThat(thrown).isNull();
        assertThat(committed(id)).containsEntry("state", "sending").containsEntry("note", "checked");
        assertThat(((Number) committed(id).get("fence")).longValue()).isEqualTo(7);
    }

    /**
     * A transaction that rolls back takes its claim and confirm with it. Control: the claim on a
     * second connection was committed on its own and stays, though the transaction rolled back.
     */
    @ParameterizedTest(name = "second connection: {0}")
    @ValueSource(booleans = {false, true})
    void aRollbackTakesTheWritesWithIt(boolean control) {
        String id = pendingRow();
        assertThatThrownBy(() -> transactions.executeWithoutResult(status -> {
            if (control) {
                rows.claim(db, id, 3);
            } else {
                springRows.claim(id, 3);
                springRows.confirm(id, 3, Map.of("note", "paid"));
            }
            throw new IllegalStateException("the application fails after the fenced writes");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(committed(id)).containsEntry("state", control ? "sending" : "pending");
    }

    /** A caller that swallows a refusal and returns normally still commits nothing of its transaction. */
    @Test
    void aSwallowedRefusalRollsTheTransactionBack() {
        String id = pendingRow();
        springRows.claim(id, 9); // outside a transaction: committed on its own
        assertThatThrownBy(() -> transactions.executeWithoutResult(status -> {
            jdbc.update("UPDATE " + table + " SET note = 'stale' WHERE id = ?", id);
            try {
                springRows.claim(id, 8);
            } catch (FenceViolation ignored) {
                // the caller's mistake: it carries on
            }
        })).isInstanceOf(UnexpectedRollbackException.class);
        assertThat(committed(id)).containsEntry("state", "sending").containsEntry("note", null);
    }

    /**
     * Outside a transaction, on a pool that hands out manual commit, each write is committed before
     * the call returns: batches included.
     */
    @Test
    void outsideATransactionEachWriteCommitsOnAManualCommitPool() {
        String a = pendingRow();
        String b = pendingRow();
        SpringFencedRows onManualCommit = SpringFencedRows.of(manualCommitDb, rows);
        assertThat(onManualCommit.claimAll(List.of(a, b), 4).claimed()).hasSize(2);
        onManualCommit.confirm(a, 4, Map.of("note", "paid"));
        assertThat(onManualCommit.confirmAll(Map.of(b, Map.of("note", "paid")), 4).refusals()).isEmpty();
        assertThat(committed(a)).containsEntry("state", "sent").containsEntry("note", "paid");
        assertThat(committed(b)).containsEntry("state", "sent").containsEntry("note", "paid");
    }
}
