package dev.fenced.settlement.readme;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FenceViolation;
import dev.fenced.Lease;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.GatewayRefund;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.RefundSummary;
import dev.fenced.testing.TestDatabases;
import dev.fenced.testing.TestRedis;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The README's Quick start, compiled and run: its code block must be, line for line, the body of
 * {@link #settle} below, which runs against a real Redis, the gateway over HTTP, and PostgreSQL
 * and MariaDB. A README edit that does not compile, or that no longer settles, fails here.
 */
class QuickStartTest {
    private static final Path README = Path.of("..", "README.md");

    private record Pending(String id, String key, BigDecimal amount, String currency) {
    }

    static void settle(DataSource db, String redisUrl, GatewayClient gateway, String merchant) throws SQLException {
        // README quick start: begin
        RefundSchema.migrate(db);                                  // Flyway: needs flyway-core and flyway-database-postgresql or flyway-mysql
        String resource = Merchants.resource(merchant);            // "settle:m_4471"
        FencedRows refunds = FencedRows.of(RefundSchema.table());
        try (RedisLeaseStore leases = RedisLeaseStore.builder(redisUrl)
                .fenceFloor(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf))  // reseeds a lost counter
                .build()) {
            Optional<Lease> maybe = leases.tryAcquire(resource, Duration.ofSeconds(30));
            if (maybe.isEmpty()) {
                return;                                            // another holder is live: contention is normal
            }
            try (Lease lease = maybe.get(); Connection c = db.getConnection()) {
                List<Pending> pending = new ArrayList<>();         // rows found in 'sending' need a lookup first: SettlementWorker does it
                try (PreparedStatement s = c.prepareStatement(
                        "SELECT id, idempotency_key, amount, currency FROM refund WHERE merchant = ? AND state = 'pending' ORDER BY seq")) {
                    s.setString(1, merchant);
                    try (ResultSet rs = s.executeQuery()) {
                        while (rs.next()) {
                            pending.add(new Pending(rs.getString(1), rs.getString(2), rs.getBigDecimal(3), rs.getString(4)));
                        }
                    }
                }
                for (Pending refund : pending) {
                    refunds.claim(c, refund.id(), lease.token());  // pending -> sending, only while fence < token
                    gateway.createRefund(refund.key(), refund.id(), merchant, refund.amount(), refund.currency());  // the row's own key
                    refunds.confirm(c, refund.id(), lease.token()); // sending -> sent, only while fence = token
                }
            } catch (FenceViolation stale) {
                // Another holder owns the row now: abandon the batch, never retry. If this store's
                // counter lags the row's fence (Redis lost it), raise it past, or the next grant repeats.
                if (stale.storedFence() != null) {
                    leases.observeStoredFence(resource, stale.storedFence());
                }
            }
        }
        // README quick start: end
    }

    /** The README's block, and the region between the markers above, with indentation dropped. */
    @Test
    void theReadmesQuickStartIsThisCode() throws IOException {
        String readme = Files.readString(README);
        int heading = readme.indexOf("## Quick start (library)");
        int open = readme.indexOf("```java\n", heading) + "```java\n".length();
        String block = readme.substring(open, readme.indexOf("```", open));
        String source = Files.readString(Path.of("src/test/java/dev/fenced/settlement/readme/QuickStartTest.java"));
        String region = source.substring(source.indexOf("// README quick start: begin\n") + "// README quick start: begin\n".length(),
                source.indexOf("        // README quick start: end"));
        assertThat(normalized(block)).isEqualTo(normalized(region));
    }

    private static List<String> normalized(String code) {
        return code.lines().map(String::strip).filter(line -> !line.isEmpty()).toList();
    }

    @Test
    void itSettlesOnPostgres() throws SQLException {
        runOn(TestDatabases.postgresUrl());
    }

    @Test
    void itSettlesOnMariaDb() throws SQLException {
        TestDatabases.mariadb(); // skips outside CI when no MariaDB is configured, fails in CI
        runOn(TestDatabases.mariadbUrl().orElseThrow());
    }

    private static void runOn(String url) throws SQLException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(3);
        try (HikariDataSource db = new HikariDataSource(config);
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(1)).build())) {
            RefundSchema.migrate(db);
            String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
            RefundSeeder.seed(db, merchant, merchant + "_r", 12, new BigDecimal("843.00"), "EUR");
            settle(db, TestRedis.uri(), GatewayClient.of(gateway.url(), Duration.ofSeconds(2)), merchant);
            assertThat(RefundSummary.of(db, merchant).rowsByState()).containsExactly(Map.entry("sent", 12L));
            List<GatewayRefund> paid = gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).toList();
            assertThat(paid).hasSize(12);
            assertThat(paid.stream().map(GatewayRefund::amount).reduce(BigDecimal.ZERO, BigDecimal::add)).isEqualByComparingTo("843.00");
        }
    }
}
