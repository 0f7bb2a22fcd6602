package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.SettlementOutcome.Result;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The settlement journal in a second database (MariaDB when configured, else a second PostgreSQL
 * database): one line per confirmed refund, written at the end of the run under its token; a
 * journal that cannot be written fails the run, and the next run writes what is missing.
 */
class SettlementJournalTest {
    private static HikariDataSource db;
    private static HikariDataSource journalDb;
    private static RedisLeaseStore leases;

    private static HikariDataSource pool(String url) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(6);
        return new HikariDataSource(config);
    }

    @BeforeAll
    static void start() {
        db = pool(TestDatabases.postgresUrl());
        RefundSchema.migrate(db);
        journalDb = pool(TestDatabases.journalUrl());
        JournalSchema.migrate(journalDb);
        leases = RedisLeaseStore.builder(TestRedis.uri()).tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf))).build();
    }

    @AfterAll
    static void stop() {
        leases.close();
        journalDb.close();
        db.close();
    }

    private static SettlementWorker.Builder worker(PaymentGateway gateway, SettlementJournal journal) {
        return SettlementWorker.builder().leaseStore(leases).dataSource(db).journal(journal)
                .gateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(2))).ttl(Duration.ofSeconds(10)).concurrency(4);
    }

    @Test
    void everyConfirmedRefundGetsOneLineWithTheTokenThatConfirmedIt() {
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(db, merchant, merchant + "_r", 25, new BigDecimal("1756.25"), "EUR");
        SettlementJournal journal = SettlementJournal.in(journalDb);
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(2)).build())) {
            SettlementOutcome first = worker(gateway, journal).build().settle(merchant);
            assertThat(first.result()).isEqualTo(Result.COMPLETED);
            List<JournalLine> lines = journal.lines(merchant);
            assertThat(lines).hasSize(25).allMatch(line -> line.token() == first.token() && line.writtenBy() == first.token());
            assertThat(lines.stream().map(JournalLine::amount).reduce(BigDecimal.ZERO, BigDecimal::add)).isEqualByComparingTo("1756.25");
            assertThat(lines.stream().map(JournalLine::gatewayReference).distinct()).hasSize(25);

            SettlementOutcome again = worker(gateway, journal).build().settle(merchant);
            assertThat(again.result()).isEqualTo(Result.COMPLETED);
            assertThat(journal.lines(merchant)).as("nothing missing, nothing appended twice").hasSize(25);
        }
    }

    /** A journal whose database is down fails the run (work is left undone); the next run appends what is missing. */
    @Test
    void aJournalThatCannotBeWrittenFailsTheRunAndTheNextRunCatchesUp() {
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(db, merchant, merchant + "_r", 10, new BigDecimal("702.50"), "EUR");
        HikariDataSource closed = pool(TestDatabases.journalUrl());
        closed.close();
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(2)).build())) {
            SettlementOutcome down = worker(gateway, SettlementJournal.in(closed)).build().settle(merchant);
            assertThat(down.result()).isEqualTo(Result.FAILED);
            assertThat(down.sent()).isEqualTo(10);
            SettlementJournal journal = SettlementJournal.in(journalDb);
            assertThat(journal.lines(merchant)).isEmpty();

            SettlementOutcome next = worker(gateway, journal).build().settle(merchant);
            assertThat(next.result()).isEqualTo(Result.COMPLETED);
            assertThat(journal.lines(merchant)).hasSize(10).allMatch(line -> line.token() == down.token() && line.writtenBy() == next.token());
        }
    }
}
