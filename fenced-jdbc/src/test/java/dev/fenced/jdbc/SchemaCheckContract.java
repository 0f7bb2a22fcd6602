package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** {@link SchemaCheck} on one database: each kind of unfit table gets its own line; a fit one gets none. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SchemaCheckContract {
    private HikariDataSource pool;

    protected abstract String jdbcUrl();

    @BeforeAll
    void open() throws SQLException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setMaximumPoolSize(2);
        pool = new HikariDataSource(config);
        FencedSchema.migrate(pool);
        ddl("DROP TABLE IF EXISTS sc_fit", "DROP TABLE IF EXISTS sc_nullable", "DROP TABLE IF EXISTS sc_int", "DROP TABLE IF EXISTS sc_no_fence",
                "DROP TABLE IF EXISTS sc_not_unique", "DROP TABLE IF EXISTS sc_scoped",
                "CREATE TABLE sc_fit (id VARCHAR(32) PRIMARY KEY, state VARCHAR(16) NOT NULL, fence BIGINT NOT NULL DEFAULT 0)",
                "CREATE TABLE sc_nullable (id VARCHAR(32) PRIMARY KEY, state VARCHAR(16) NOT NULL, fence BIGINT)",
                "CREATE TABLE sc_int (id VARCHAR(32) PRIMARY KEY, state VARCHAR(16) NOT NULL, fence INTEGER NOT NULL DEFAULT 0)",
                "CREATE TABLE sc_no_fence (id VARCHAR(32) PRIMARY KEY, state VARCHAR(16) NOT NULL)",
                "CREATE TABLE sc_not_unique (id VARCHAR(32) NOT NULL, state VARCHAR(16) NOT NULL, fence BIGINT NOT NULL DEFAULT 0)",
                "CREATE TABLE sc_scoped (merchant VARCHAR(32) NOT NULL, id VARCHAR(32) NOT NULL, state VARCHAR(16) NOT NULL,"
                        + " fence BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (merchant, id))",
                "INSERT INTO sc_nullable (id, state) VALUES ('r_1', 'pending')");
    }

    @AfterAll
    void close() throws SQLException {
        if (pool != null) {
            ddl("DROP TABLE sc_fit", "DROP TABLE sc_nullable", "DROP TABLE sc_int", "DROP TABLE sc_no_fence", "DROP TABLE sc_not_unique",
                    "DROP TABLE sc_scoped");
            pool.close();
        }
    }

    private void ddl(String... statements) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            for (String statement : statements) {
                s.execute(statement);
            }
        }
    }

    protected List<String> problems(FencedTable table) throws SQLException {
        try (Connection c = pool.getConnection()) {
            return SchemaCheck.check(c, table).stream().map(SchemaCheck.Problem::toString).toList();
        }
    }

    @Test
    void aFitTableAndTheLibrarysTablesHaveNoProblem() throws SQLException {
        assertThat(problems(FencedTable.builder("sc_fit").build())).isEmpty();
        assertThat(problems(FencedTable.builder("sc_scoped").scopeColumn("merchant").build())).as("unique with its scope").isEmpty();
        try (Connection c = pool.getConnection()) {
            assertThat(SchemaCheck.checkLibraryTables(c)).isEmpty();
        }
    }

    @Test
    void eachProblemIsOneLine() throws SQLException {
        assertThat(problems(FencedTable.builder("sc_nullable").build())).singleElement().asString()
                .startsWith("sc_nullable.fence: is nullable");
        assertThat(problems(FencedTable.builder("sc_int").build())).singleElement().asString()
                .startsWith("sc_int.fence: is ").contains("must be BIGINT");
        assertThat(problems(FencedTable.builder("sc_no_fence").build())).singleElement().asString()
                .isEqualTo("sc_no_fence.fence: missing: the fence column must exist");
        assertThat(problems(FencedTable.builder("sc_not_unique").build())).singleElement().asString()
                .startsWith("sc_not_unique.id: is not unique");
        assertThat(problems(FencedTable.builder("sc_scoped").build())).as("unique only with a scope the table does not name")
                .singleElement().asString().startsWith("sc_scoped.id: is not unique");
        assertThat(problems(FencedTable.builder("sc_missing").build())).containsExactly("sc_missing: no such table");
        assertThat(problems(FencedTable.builder("sc_fit").stateColumn("status").build())).containsExactly(
                "sc_fit.status: missing: the state column must exist");
    }

    /** The first claim checks the table: a nullable fence is named as such, not refused as "fence null". */
    @Test
    void theFirstClaimOnAnUnfitTableSaysWhatIsWrong() throws SQLException {
        FencedRows rows = FencedRows.of(FencedTable.builder("sc_nullable").states("pending", "sending", "sent").build());
        try (Connection c = pool.getConnection()) {
            assertThatThrownBy(() -> rows.claim(c, "r_1", 1)).isInstanceOf(SchemaProblemException.class)
                    .hasMessageContaining("sc_nullable.fence: is nullable");
        }
    }
}
