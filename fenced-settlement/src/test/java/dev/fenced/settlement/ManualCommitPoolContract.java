package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.SettlementOutcome.Result;
import dev.fenced.testing.servers.OneConnectionPool;
import dev.fenced.testing.servers.TestRedis;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The whole settlement on a pool that hands out connections with {@code autoCommit=false}, as
 * Spring applications often configure HikariCP: every row the run reports sent, failed or put back
 * is so in the database, read through a connection of another pool. One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ManualCommitPoolContract {
    private HikariDataSource db;
    private RedisLeaseStore leases;

    /** A JDBC URL of the database under test. */
    protected abstract String jdbcUrl();

    @BeforeAll
    void start() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setMaximumPoolSize(10);
        config.setAutoCommit(false);
        db = new HikariDataSource(config);
        RefundSchema.migrate(db);
        JournalSchema.migrate(db);
        leases = RedisLeaseStore.builder(TestRedis.uri())
                .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf))).build();
    }

    @AfterAll
    void stop() {
        if (db == null) {
            return; // the database was not configured and the class was skipped
        }
        leases.close();
        db.close();
    }

    private String seed(int refunds, String total) {
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(db, merchant, merchant + "_r", refunds, new BigDecimal(total), "EUR");
        return merchant;
    }

    private SettlementWorker.Builder worker(PaymentGateway gateway) {
        return SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(5)))
                .ttl(Duration.ofSeconds(10)).gatewayBackoff(Duration.ofMillis(10));
    }

    /** Refunds above 10.00 are refused by the gateway: the run sends some and fails the others, and journals what it sent. */
    @Test
    void sentAndFailedRowsAreCommittedAsReported() throws Exception {
        String merchant = seed(20, "200.00");
        SettlementJournal journal = SettlementJournal.in(db);
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO)
                .refuseAbove(new BigDecimal("10.00")).build())) {
            SettlementOutcome outcome = worker(gateway).concurrency(4).journal(journal).build().settle(merchant);
            assertThat(outcome.result()).isEqualTo(Result.REJECTED);
            assertThat(outcome.sent()).isPositive();
            assertThat(outcome.failed()).isPositive();
            assertThat(outcome.sent() + outcome.failed()).isEqualTo(20);

            Map<String, Long> states = committedStates(merchant);
            assertThat(states).as("what another connection sees").containsOnly(
                    Map.entry("sent", (long) outcome.sent()), Map.entry("failed", (long) outcome.failed()));
            assertThat(committedCount("SELECT COUNT(*) FROM refund WHERE merchant = ? AND state = 'failed' AND failure_reason LIKE '%exceeds%'",
                    merchant)).isEqualTo(outcome.failed());
            List<GatewayRefund> paid = gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).toList();
            assertThat(paid).hasSize(outcome.sent());
            assertThat(committedCount("SELECT COUNT(*) FROM settlement_journal WHERE merchant = ?", merchant))
                    .as("journal lines committed").isEqualTo(outcome.sent());
        }
    }

    /** The gateway is down: the run puts every row it claimed back to pending, and they are pending for the next run. */
    @Test
    void rowsPutBackAreCommittedAsReported() throws Exception {
        String merchant = seed(12, "120.00");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            gateway.outage(Duration.ofSeconds(30));
            AtomicInteger putBack = new AtomicInteger();
            SettlementOutcome outcome = worker(gateway).concurrency(4).gatewayAttempts(1).listener(event -> {
                if (event.type() == SettlementEvent.Type.LEFT && event.detail().startsWith("pending")) {
                    putBack.incrementAndGet();
                }
            }).build().settle(merchant);
            assertThat(outcome.result()).isEqualTo(Result.GATEWAY_UNAVAILABLE);
            assertThat(putBack.get()).as("rows the run put back").isPositive();
            assertThat(committedStates(merchant)).as("what another connection sees: nothing left sending")
                    .containsOnly(Map.entry("pending", 12L));
        }
    }

    /** The seeder commits its rows and gives the connection back in the mode it came in, either one. */
    @Test
    void theSeederGivesTheConnectionBackAsItCame() throws SQLException {
        for (boolean autoCommit : new boolean[] {true, false}) {
            String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
            try (Connection pooled = DriverManager.getConnection(jdbcUrl())) {
                pooled.setAutoCommit(autoCommit);
                RefundSeeder.seed(OneConnectionPool.of(pooled), merchant, merchant + "_r", 3, new BigDecimal("3.00"), "EUR");
                assertThat(pooled.getAutoCommit()).as("auto-commit as it came: %s", autoCommit).isEqualTo(autoCommit);
            }
            assertThat(committedStates(merchant)).containsOnly(Map.entry("pending", 3L));
        }
    }

    /** A repair on a connection in manual commit commits its fenced writes and leaves the connection in manual commit. */
    @Test
    void aRepairCommitsAndGivesTheConnectionBackAsItCame() throws Exception {
        String merchant = seed(4, "40.00");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO)
                .refuseAbove(new BigDecimal("0.01")).build())) {
            assertThat(worker(gateway).build().settle(merchant).failed()).isEqualTo(4);
        }
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build());
             Connection pooled = DriverManager.getConnection(jdbcUrl())) {
            pooled.setAutoCommit(false);
            Reconciliation.of(OneConnectionPool.of(pooled), GatewayClient.of(gateway.url(), Duration.ofSeconds(5)))
                    .repair(merchant, leases, Duration.ofSeconds(10), true);
            assertThat(pooled.getAutoCommit()).as("manual commit, as it came").isFalse();
            pooled.rollback();
        }
        assertThat(committedStates(merchant)).as("failed rows without a refund retried").containsOnly(Map.entry("pending", 4L));
    }

    /**
     * Control: the pre-fix write, a fenced UPDATE on a connection of this pool with nobody
     * committing it, is rolled back when the connection goes back to the pool, though the UPDATE
     * itself reported one row written. This is what the run lost before it committed its writes.
     */
    @Test
    void controlAnUncommittedWriteOnThisPoolIsLost() throws Exception {
        String merchant = seed(1, "10.00");
        String id = merchant + "_r001";
        FencedRows rows = FencedRows.of(RefundSchema.table());
        rows.claim(db, id, 1);
        assertThat(committedStates(merchant)).containsOnly(Map.entry("sending", 1L));
        try (Connection connection = db.getConnection()) {
            assertThat(connection.getAutoCommit()).isFalse();
            RefundWrites.fenced().fail(connection, id, 1, "refused");
        }
        assertThat(committedStates(merchant)).as("the fail was rolled back").containsOnly(Map.entry("sending", 1L));
    }

    /** States through a connection of its own, in auto-commit: only what was committed. */
    private Map<String, Long> committedStates(String merchant) throws SQLException {
        Map<String, Long> states = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(jdbcUrl());
             PreparedStatement s = c.prepareStatement("SELECT state, COUNT(*) FROM refund WHERE merchant = ? GROUP BY state")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    states.put(rs.getString(1), rs.getLong(2));
                }
            }
        }
        return states;
    }

    private int committedCount(String sql, String merchant) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl()); PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
