package dev.fenced.settlement.readme;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FenceViolation;
import dev.fenced.Lease;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.RefundSummary;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
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
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The README's Quick start, compiled and run: its imports must be this file's, its body block, line
 * for line, the body of {@link #settle} below, and its call block the call in {@link #runOn}, which
 * run against a real Redis, the gateway over HTTP, and PostgreSQL and MariaDB; the INSERT it gives
 * for an application's own rows is run as it stands there. A README edit that does not compile, or
 * that no longer settles, fails here.
 */
class QuickStartTest {
    private static final Path README = Path.of("..", "README.md");
    private static final Path SOURCE = Path.of("src/test/java/dev/fenced/settlement/readme/QuickStartTest.java");

    private record Pending(String id, String key, BigDecimal amount, String currency) {
    }

    static void settle(DataSource db, String redisUrl, GatewayClient gateway, String merchant) throws SQLException {
        // README quick start: begin
        RefundSchema.migrate(db);                                  // Flyway: needs flyway-core and flyway-database-postgresql or flyway-mysql
        String resource = Merchants.resource(merchant);            // "settle:m_4471"
        FencedRows refunds = FencedRows.of(RefundSchema.table());
        try (RedisLeaseStore leases = RedisLeaseStore.builder(redisUrl)
                .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf)))  // reseeds a lost counter
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

    /** The README's body block, and the region between the markers above, with indentation dropped. */
    @Test
    void theReadmesQuickStartIsThisCode() throws IOException {
        assertThat(normalized(readmeBlocks().get(1))).isEqualTo(normalized(region("README quick start")));
    }

    /** The README's call block, and the region between the markers in {@link #runOn}. */
    @Test
    void theReadmesCallIsThisCode() throws IOException {
        assertThat(normalized(readmeBlocks().get(2))).isEqualTo(normalized(region("README quick start, the call")));
    }

    /**
     * The README's imports are this file's, and name every type of this file's imports that its
     * code blocks use: pasted together, they compile as this file does.
     */
    @Test
    void theReadmesImportsAreTheOnesItsCodeNeeds() throws IOException {
        List<String> blocks = readmeBlocks();
        Set<String> readmeImports = imports(blocks.get(0));
        Set<String> ownImports = imports(Files.readString(SOURCE));
        assertThat(ownImports).as("the README's imports must be real: this file's").containsAll(readmeImports);
        String code = blocks.get(1) + blocks.get(2);
        List<String> needed = ownImports.stream()
                .filter(name -> Pattern.compile("\\b" + name.substring(name.lastIndexOf('.') + 1) + "\\b").matcher(code).find())
                .toList();
        assertThat(readmeImports).as("every type the README's code names").containsAll(needed);
    }

    /** The README's ```java blocks in the Quick start: the imports, the body of settle, the call. */
    private static List<String> readmeBlocks() throws IOException {
        String readme = Files.readString(README);
        int heading = readme.indexOf("## Quick start (library)");
        String section = readme.substring(heading, readme.indexOf("\n## ", heading + 1));
        List<String> blocks = new ArrayList<>();
        Matcher m = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL).matcher(section);
        while (m.find()) {
            blocks.add(m.group(1));
        }
        assertThat(blocks).as("the Quick start's imports, body and call").hasSize(3);
        return blocks;
    }

    private static String region(String marker) throws IOException {
        String source = Files.readString(SOURCE);
        String begin = "// " + marker + ": begin\n";
        int start = source.indexOf(begin);
        assertThat(start).as(begin).isNotNegative();
        return source.substring(start + begin.length(), source.indexOf("// " + marker + ": end"));
    }

    private static Set<String> imports(String code) {
        Set<String> names = new TreeSet<>();
        Matcher m = Pattern.compile("\\bimport\\s+([\\w.]+);").matcher(code);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    private static List<String> normalized(String code) {
        return code.lines().map(String::strip).filter(line -> !line.isEmpty()).toList();
    }

    /** The INSERT the README gives an application for its own rows, as it stands there. */
    private static String readmeInsert() throws IOException {
        Matcher m = Pattern.compile("`(INSERT INTO refund \\([^`]*\\) VALUES \\([^`]*\\))`").matcher(Files.readString(README));
        assertThat(m.find()).as("the README's INSERT INTO refund").isTrue();
        return m.group(1);
    }

    @Test
    void itSettlesOnPostgres() throws SQLException, IOException {
        runOn(TestDatabases.postgresUrl());
    }

    @Test
    void itSettlesOnMariaDb() throws SQLException, IOException {
        TestDatabases.mariadb(); // skips outside CI when no MariaDB is configured, fails in CI
        runOn(TestDatabases.mariadbUrl().orElseThrow());
    }

    private static void runOn(String url) throws SQLException, IOException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(3);
        try (HikariDataSource db = new HikariDataSource(config);
             PaymentGateway server = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(1)).build())) {
            String gatewayUrl = server.url();
            String redisUrl = TestRedis.uri();
            String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
            // README quick start, the call: begin
            RefundSchema.migrate(db);                                                               // the refund table, as settle does
            RefundSeeder.seed(db, merchant, merchant + "_r", 12, new BigDecimal("843.00"), "EUR");  // 12 pending refunds, 843.00 EUR in all
            GatewayClient gateway = GatewayClient.of(gatewayUrl, Duration.ofSeconds(5));           // "http://127.0.0.1:8080", 5 s a request
            settle(db, redisUrl, gateway, merchant);
            // README quick start, the call: end
            assertSettled(db, server, merchant, 12, "843.00");

            // An application's own rows, inserted with the README's statement and nothing else.
            String own = "m_" + UUID.randomUUID().toString().substring(0, 8);
            try (Connection c = db.getConnection(); PreparedStatement insert = c.prepareStatement(readmeInsert())) {
                for (int seq = 1; seq <= 3; seq++) {
                    insert.setString(1, own + "_refund_" + seq);
                    insert.setString(2, own);
                    insert.setInt(3, seq);
                    insert.setBigDecimal(4, new BigDecimal("10.50"));
                    insert.setString(5, "EUR");
                    insert.executeUpdate();
                }
            }
            settle(db, redisUrl, gateway, own);
            assertSettled(db, server, own, 3, "31.50");
            assertThat(server.ledger().stream().filter(r -> r.merchant().equals(own)).map(GatewayRefund::idempotencyKey).distinct())
                    .as("each row its own key, from the column's default").hasSize(3).allSatisfy(key -> UUID.fromString(key));
        }
    }

    private static void assertSettled(DataSource db, PaymentGateway server, String merchant, int count, String total) {
        assertThat(RefundSummary.of(db, merchant).rowsByState()).containsExactly(Map.entry("sent", (long) count));
        List<GatewayRefund> paid = server.ledger().stream().filter(r -> r.merchant().equals(merchant)).toList();
        assertThat(paid).hasSize(count);
        assertThat(paid.stream().map(GatewayRefund::amount).reduce(BigDecimal.ZERO, BigDecimal::add)).isEqualByComparingTo(total);
    }
}
