package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FenceViolation;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@code updated_at} of a refund row moves with each of the worker's state changes (claim, confirm,
 * fail, put back) and stays put when a write is refused. Before each step the column is set far
 * in the past, so the test does not depend on the clock's resolution. One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RefundUpdatedAtContract {
    private static final Timestamp LONG_AGO = Timestamp.valueOf("2001-01-01 00:00:00");
    private final RefundWrites writes = RefundWrites.fenced();
    private HikariDataSource db;

    /** A JDBC URL of the database under test. */
    protected abstract String jdbcUrl();

    /** Whether the schema before V6 already moved updated_at on a fenced write (MariaDB's ON UPDATE did; PostgreSQL had nothing). */
    protected abstract boolean movedBeforeV6();

    @BeforeAll
    void start() {
        db = pool(jdbcUrl());
        RefundSchema.migrate(db);
    }

    @AfterAll
    void stop() {
        if (db != null) {
            db.close();
        }
    }

    private static HikariDataSource pool(String url) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(4);
        return new HikariDataSource(config);
    }

    @Test
    void claimConfirmFailAndPutBackEachMoveUpdatedAt() throws SQLException {
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(db, merchant, merchant + "_r", 3, new BigDecimal("3.00"), "EUR");
        String sent = merchant + "_r001";
        String failed = merchant + "_r002";
        String putBack = merchant + "_r003";
        try (Connection c = db.getConnection()) {
            setLongAgo(c, sent, failed, putBack);
            assertThat(writes.claimAll(c, List.of(sent, failed, putBack), 5)).isEmpty();
            assertMoved(c, "claim", sent, failed, putBack);

            setLongAgo(c, sent);
            assertThat(writes.confirmAll(c, Map.of(sent, "gw_1"), 5)).isEmpty();
            assertMoved(c, "confirm", sent);

            setLongAgo(c, failed);
            writes.fail(c, failed, 5, "refused");
            assertMoved(c, "fail", failed);

            setLongAgo(c, putBack);
            writes.release(c, putBack, 5);
            assertMoved(c, "put back", putBack);

            setLongAgo(c, sent);
            assertThatThrownBy(() -> writes.fail(c, sent, 4, "stale")).isInstanceOf(FenceViolation.class);
            assertThat(updatedAt(c, sent)).as("a refused write changes nothing").isEqualTo(LONG_AGO);
        }
    }

    /**
     * The control: on the table as it was before V6, in a database of the test's own, a claim left
     * updated_at where it was on PostgreSQL (MariaDB's ON UPDATE already moved it); after V6 it moves.
     */
    @Test
    void beforeV4AClaimLeftUpdatedAtBehindOnPostgres() throws SQLException {
        String name = "fenced_ua_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        try (Connection c = DriverManager.getConnection(jdbcUrl()); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        }
        try {
            try (HikariDataSource own = pool(jdbcUrl().replaceFirst("^(jdbc:[a-z]+://[^/?]+/)[^?]*", "$1" + name))) {
                String dialect;
                try (Connection c = own.getConnection()) {
                    dialect = c.getMetaData().getDatabaseProductName().toLowerCase(java.util.Locale.ROOT).contains("postgres")
                            ? "postgresql" : "mariadb";
                }
                Flyway.configure().dataSource(own).locations("classpath:" + RefundSchema.SCRIPTS + "/" + dialect)
                        .table(RefundSchema.HISTORY_TABLE).baselineOnMigrate(true).baselineVersion("0").target("5").load().migrate();
                RefundSeeder.seed(own, "m_ua", "m_ua_r", 2, new BigDecimal("2.00"), "EUR");
                try (Connection c = own.getConnection()) {
                    setLongAgo(c, "m_ua_r001");
                    writes.claimAll(c, List.of("m_ua_r001"), 1);
                    assertThat(updatedAt(c, "m_ua_r001").after(LONG_AGO)).as("moved before V6").isEqualTo(movedBeforeV6());
                }
                RefundSchema.migrate(own);
                try (Connection c = own.getConnection()) {
                    setLongAgo(c, "m_ua_r002");
                    writes.claimAll(c, List.of("m_ua_r002"), 1);
                    assertMoved(c, "claim after V6", "m_ua_r002");
                }
            }
        } finally {
            try (Connection c = DriverManager.getConnection(jdbcUrl()); Statement s = c.createStatement()) {
                s.execute("DROP DATABASE " + name);
            }
        }
    }

    private static void setLongAgo(Connection c, String... ids) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("UPDATE refund SET updated_at = ? WHERE id = ?")) {
            for (String id : ids) {
                s.setTimestamp(1, LONG_AGO);
                s.setString(2, id);
                assertThat(s.executeUpdate()).isEqualTo(1);
                assertThat(updatedAt(c, id)).as("an UPDATE that sets updated_at keeps its value").isEqualTo(LONG_AGO);
            }
        }
    }

    private static void assertMoved(Connection c, String step, String... ids) throws SQLException {
        for (String id : ids) {
            assertThat(updatedAt(c, id)).as("%s moves updated_at of %s", step, id).isAfter(LONG_AGO);
        }
    }

    private static Timestamp updatedAt(Connection c, String id) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT updated_at FROM refund WHERE id = ?")) {
            s.setString(1, id);
            try (ResultSet rs = s.executeQuery()) {
                assertThat(rs.next()).isTrue();
                return rs.getTimestamp(1);
            }
        }
    }
}
