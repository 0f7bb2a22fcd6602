package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.RefundGateway;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.SettlementOutcome.Result;
import dev.fenced.testing.servers.TestRedis;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Amounts in their currency's minor units (ISO 4217) from the seed to the gateway and the journal:
 * KWD's three decimals are stored and paid exactly, JPY's none; what a currency cannot hold is
 * refused by the seeder and never sent by the worker. One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class MinorUnitsContract {
    private HikariDataSource db;
    private RedisLeaseStore leases;

    /** A JDBC URL of the database under test. */
    protected abstract String jdbcUrl();

    @BeforeAll
    void start() {
        db = pool(jdbcUrl());
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

    private static HikariDataSource pool(String url) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(6);
        return new HikariDataSource(config);
    }

    private static String freshMerchant() {
        return "m_" + UUID.randomUUID().toString().substring(0, 8);
    }

    private SettlementWorker.Builder worker(RefundGateway gateway) {
        return SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(gateway).ttl(Duration.ofSeconds(10))
                .gatewayBackoff(Duration.ofMillis(10)).journal(SettlementJournal.in(db));
    }

    private static GatewayConfig fast() {
        return GatewayConfig.builder().latency(Duration.ZERO).build();
    }

    /** KWD 12.345 in 5 refunds: stored, sent, confirmed and journaled with their three decimals, summing to the total exactly. */
    @Test
    void kuwaitiDinarsKeepTheirThirdDecimalFromSeedToGatewayAndJournal() throws Exception {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", 5, new BigDecimal("12.345"), "KWD");
        Map<String, BigDecimal> stored = amounts(merchant);
        assertThat(stored.values().stream().reduce(BigDecimal.ZERO, BigDecimal::add)).isEqualByComparingTo("12.345");
        assertThat(stored.values()).as("a third decimal kept, not rounded").anyMatch(a -> a.stripTrailingZeros().scale() == 3);
        try (PaymentGateway gateway = PaymentGateway.start(fast())) {
            SettlementOutcome outcome = worker(GatewayClient.of(gateway.url(), Duration.ofSeconds(5))).build().settle(merchant);
            assertThat(outcome.result()).isEqualTo(Result.COMPLETED);
            Map<String, String> paid = new TreeMap<>();
            for (GatewayRefund refund : gateway.ledger()) {
                if (refund.merchant().equals(merchant)) {
                    paid.put(refund.reference(), refund.amount().toPlainString() + " " + refund.currency());
                }
            }
            Map<String, String> expected = new TreeMap<>();
            stored.forEach((id, amount) -> expected.put(id, amount.setScale(3).toPlainString() + " KWD"));
            assertThat(paid).as("the gateway holds each row's amount exactly").isEqualTo(expected);
            Map<String, BigDecimal> journaled = new TreeMap<>();
            SettlementJournal.in(db).lines(merchant).forEach(line -> journaled.put(line.refundId(), line.amount()));
            assertThat(journaled).hasSize(5);
            journaled.forEach((id, amount) -> assertThat(amount).as(id).isEqualByComparingTo(stored.get(id)));
        }
        assertThat(RefundSummary.of(db, merchant).totalAmount().toPlainString()).isEqualTo("12.345");
    }

    /** JPY 100000 in 7 refunds: whole yen, sent as whole yen; the summary's total has no decimals. */
    @Test
    void yenAreWholeFromSeedToGateway() throws Exception {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", 7, new BigDecimal("100000"), "JPY");
        assertThat(amounts(merchant).values()).allMatch(a -> a.stripTrailingZeros().scale() <= 0);
        try (PaymentGateway gateway = PaymentGateway.start(fast())) {
            SettlementOutcome outcome = worker(GatewayClient.of(gateway.url(), Duration.ofSeconds(5))).build().settle(merchant);
            assertThat(outcome.result()).isEqualTo(Result.COMPLETED);
            List<GatewayRefund> paid = gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).toList();
            assertThat(paid).hasSize(7).allMatch(r -> r.amount().scale() == 0 && r.currency().equals("JPY"));
            assertThat(paid.stream().map(GatewayRefund::amount).reduce(BigDecimal.ZERO, BigDecimal::add)).isEqualByComparingTo("100000");
        }
        assertThat(RefundSummary.of(db, merchant).totalAmount().toPlainString()).isEqualTo("100000");
    }

    /** What a currency cannot hold is refused before a row is written, with the reason; nothing is rounded. */
    @Test
    void theSeederRefusesWhatTheCurrencyCannotHoldAndWritesNothing() {
        String merchant = freshMerchant();
        assertThatThrownBy(() -> RefundSeeder.seed(db, merchant, merchant + "_r", 1, new BigDecimal("1.50"), "JPY"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("JPY has none");
        assertThatThrownBy(() -> RefundSeeder.seed(db, merchant, merchant + "_r", 1, new BigDecimal("1.2345"), "KWD"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("more than three decimals");
        assertThatThrownBy(() -> RefundSeeder.seed(db, merchant, merchant + "_r", 1, new BigDecimal("1"), "XAU"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no minor units");
        assertThatThrownBy(() -> RefundSeeder.seed(db, merchant, merchant + "_r", 1, new BigDecimal("1"), "ABC"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not an ISO 4217");
        assertThatThrownBy(() -> RefundSeeder.seed(db, merchant, merchant + "_r", 1, new BigDecimal("1"), "CLF"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 3");
        assertThatThrownBy(() -> RefundSeeder.seed(db, merchant, merchant + "_r", 3, new BigDecimal("2"), "JPY"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1");
        assertThat(RefundSummary.exists(db, merchant)).isFalse();
    }

    /**
     * A JPY row of 1.50 written by the application beside the merchant's EUR rows: the worker never
     * sends, claims or marks it, settles the others, and ends FAILED with the row and the reason;
     * the row stays pending for an operator. (Before, it was sent; the gateway, which now refuses
     * it, would have had it marked failed, and an older gateway rounded it.)
     */
    @Test
    void aRowWithMoreDecimalsThanItsCurrencyHasIsNeverSentAndFailsTheRun() throws Exception {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", 3, new BigDecimal("30.00"), "EUR");
        String bad = merchant + "_jpy";
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement(
                "INSERT INTO refund (id, merchant, seq, amount, currency, idempotency_key) VALUES (?, ?, 4, 1.50, 'JPY', ?)")) {
            s.setString(1, bad);
            s.setString(2, merchant);
            s.setString(3, UUID.randomUUID().toString());
            s.executeUpdate();
        }
        try (PaymentGateway gateway = PaymentGateway.start(fast())) {
            Recording recording = new Recording(GatewayClient.of(gateway.url(), Duration.ofSeconds(5)));
            List<SettlementEvent> events = new CopyOnWriteArrayList<>();
            SettlementOutcome outcome = worker(recording).concurrency(2).listener(events::add).build().settle(merchant);
            assertThat(outcome.result()).isEqualTo(Result.FAILED);
            assertThat(outcome.error()).contains(bad).contains("1.500 JPY has more decimals than JPY has (0)").contains("operator");
            assertThat(outcome.sent()).isEqualTo(3);
            assertThat(outcome.left()).isEqualTo(1);
            assertThat(recording.references).as("the gateway was never asked about the row").doesNotContain(bad).hasSize(3);
            assertThat(states(merchant)).containsOnly(Map.entry("pending", 1L), Map.entry("sent", 3L));
            assertThat(events).anyMatch(e -> e.type() == SettlementEvent.Type.LEFT && bad.equals(e.refundId())
                    && e.detail().contains("operator"));
        }
    }

    /**
     * The migration's control: on the refund table as it was before it (migrated to V2), a KWD
     * amount of 1.234 is stored as 1.23 without an error; after it, as 1.234. The same for the
     * journal. In a database of the test's own, dropped at the end.
     */
    @Test
    void aThirdDecimalWasRoundedAwayBeforeTheMigrationAndIsKeptAfterIt() throws Exception {
        String name = "fenced_mu_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        String url = createDatabase(name);
        try {
            try (HikariDataSource old = pool(url)) {
                String dialect = dialect(old);
                Flyway.configure().dataSource(old).locations("classpath:" + RefundSchema.SCRIPTS + "/" + dialect)
                        .table(RefundSchema.HISTORY_TABLE).baselineOnMigrate(true).baselineVersion("0").target("2").load().migrate();
                Flyway.configure().dataSource(old).locations("classpath:" + JournalSchema.SCRIPTS + "/" + dialect)
                        .table(JournalSchema.HISTORY_TABLE).baselineOnMigrate(true).baselineVersion("0").target("1").load().migrate();
                insertKwd(old, "r_before");
                assertThat(storedAmount(old, "refund", "r_before")).as("control: rounded silently").isEqualByComparingTo("1.23");
                assertThat(storedAmount(old, "settlement_journal", "r_before")).as("control: rounded silently").isEqualByComparingTo("1.23");

                RefundSchema.migrate(old);
                JournalSchema.migrate(old);
                insertKwd(old, "r_after");
                assertThat(storedAmount(old, "refund", "r_after")).isEqualByComparingTo("1.234");
                assertThat(storedAmount(old, "settlement_journal", "r_after")).isEqualByComparingTo("1.234");
                assertThat(storedAmount(old, "refund", "r_before")).as("what was stored stays as it was").isEqualByComparingTo("1.23");
                try (Connection c = old.getConnection(); Statement s = c.createStatement()) {
                    assertThatThrownBy(() -> s.executeUpdate("INSERT INTO refund (id, merchant, seq, amount, currency) VALUES"
                            + " ('r_zero', 'm_mu', 9, 0, 'KWD')")).as("the amount CHECK is kept").isInstanceOf(SQLException.class);
                }
            }
        } finally {
            dropDatabase(name);
        }
    }

    private static void insertKwd(HikariDataSource db, String id) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            int seq = id.equals("r_before") ? 1 : 2;
            s.executeUpdate("INSERT INTO refund (id, merchant, seq, amount, currency, idempotency_key) VALUES ('" + id + "', 'm_mu', "
                    + seq + ", 1.234, 'KWD', '" + UUID.randomUUID() + "')");
            s.executeUpdate("INSERT INTO settlement_journal (merchant, refund_id, amount, currency, gateway_reference, token, written_by)"
                    + " VALUES ('m_mu', '" + id + "', 1.234, 'KWD', 'gw_1', 1, 1)");
        }
    }

    private static BigDecimal storedAmount(HikariDataSource db, String table, String id) throws SQLException {
        String idColumn = table.equals("refund") ? "id" : "refund_id";
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("SELECT amount FROM " + table + " WHERE " + idColumn + " = ?")) {
            s.setString(1, id);
            try (ResultSet rs = s.executeQuery()) {
                assertThat(rs.next()).isTrue();
                return rs.getBigDecimal(1);
            }
        }
    }

    private static String dialect(HikariDataSource db) throws SQLException {
        try (Connection c = db.getConnection()) {
            return isPostgres(c) ? "postgresql" : "mariadb";
        }
    }

    private static boolean isPostgres(Connection c) throws SQLException {
        return c.getMetaData().getDatabaseProductName().toLowerCase(java.util.Locale.ROOT).contains("postgres");
    }

    /** A database of this test's own on the same server; its JDBC URL. */
    private String createDatabase(String name) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl()); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        }
        return jdbcUrl().replaceFirst("^(jdbc:[a-z]+://[^/?]+/)[^?]*", "$1" + name);
    }

    private void dropDatabase(String name) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl()); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE " + name);
        }
    }

    private Map<String, BigDecimal> amounts(String merchant) throws SQLException {
        Map<String, BigDecimal> amounts = new TreeMap<>();
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("SELECT id, amount FROM refund WHERE merchant = ?")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    amounts.put(rs.getString(1), rs.getBigDecimal(2));
                }
            }
        }
        return amounts;
    }

    private Map<String, Long> states(String merchant) throws SQLException {
        Map<String, Long> states = new TreeMap<>();
        try (Connection c = db.getConnection();
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

    /** The real gateway client, noting the reference of every refund created and the key of every lookup. */
    private static final class Recording implements RefundGateway {
        final List<String> references = new CopyOnWriteArrayList<>();
        private final RefundGateway gateway;

        Recording(RefundGateway gateway) {
            this.gateway = gateway;
        }

        @Override
        public GatewayRefund createRefund(String idempotencyKey, String reference, String merchant, BigDecimal amount, String currency) {
            references.add(reference);
            return gateway.createRefund(idempotencyKey, reference, merchant, amount, currency);
        }

        @Override
        public Optional<GatewayRefund> findByKey(String idempotencyKey) {
            references.add("lookup " + idempotencyKey);
            return gateway.findByKey(idempotencyKey);
        }

        @Override
        public List<GatewayRefund> refundsOf(String merchant) {
            return gateway.refundsOf(merchant);
        }
    }
}
