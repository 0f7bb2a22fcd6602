package dev.fenced.lab;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.cli.Connections;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementOutcome;
import dev.fenced.settlement.SettlementOutcome.Result;
import dev.fenced.settlement.SettlementWorker;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The settlement worker's batched writes under a takeover, with the article's writes and with the
 * lab's unfenced ones (the negative control): the fence is what refuses the stale holder, row by row.
 */
class UnfencedWritesTest {
    private static HikariDataSource db;
    private static RedisLeaseStore leases;

    @BeforeAll
    static void start() {
        db = Connections.database(TestDatabases.postgresUrl(), 12);
        leases = Connections.leases(TestRedis.uri(), db, "unfenced-writes-test");
    }

    @AfterAll
    static void stop() {
        if (leases != null) {
            leases.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private static String freshMerchant() {
        return "m_" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static SettlementWorker.Builder worker(PaymentGateway gateway) {
        return SettlementWorker.builder().leaseStore(leases).dataSource(db)
                .gateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(2))).ttl(Duration.ofSeconds(10));
    }

    /**
     * Eight refunds in flight, and a holder with a higher token takes every unsent row over while
     * one of them waits to confirm: the confirms written in a batch after that are refused row by
     * row, and the stale worker stops. Without the fence its confirms land on the new holder's rows.
     */
    @ParameterizedTest(name = "fencing {0}")
    @ValueSource(booleans = {true, false})
    void aTakeoverWhileConfirmsAreBatchedStopsTheStaleWorker(boolean fencing) throws Exception {
        String merchant = freshMerchant();
        String prefix = merchant + "_r";
        RefundSeeder.seed(db, merchant, prefix, 80, new BigDecimal("800.00"), "EUR");
        List<String> ids = IntStream.rangeClosed(1, 80).mapToObj(n -> RefundSeeder.refundId(prefix, n)).toList();
        AtomicLong token = new AtomicLong();
        AtomicReference<List<Object>> takenOver = new AtomicReference<>(List.of());
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(5)).build())) {
            SettlementOutcome outcome = worker(gateway).concurrency(8).variant(LabVariants.of(fencing, true, false))
                    .listener(event -> {
                        if (event.type() == SettlementEvent.Type.ACQUIRED) {
                            token.set(event.token());
                        }
                    })
                    .phaseHook((phase, refundId) -> {
                        if (phase == SettlementWorker.Phase.BEFORE_CONFIRM && refundId.equals(ids.get(20))) {
                            takenOver.set(FencedRows.of(RefundSchema.table()).claimAll(db, ids, token.get() + 1).claimed());
                        }
                    })
                    .build().settle(merchant);
            assertThat(takenOver.get()).as("rows the new holder took").isNotEmpty();
            long confirmedOverTheNewHolder = states(merchant, takenOver.get()).getOrDefault("sent", 0L);
            if (fencing) {
                assertThat(outcome.result()).isEqualTo(Result.FENCE_VIOLATION);
                assertThat(outcome.violation().storedFence()).isEqualTo(token.get() + 1);
                assertThat(confirmedOverTheNewHolder).as("stale confirms accepted").isZero();
                assertThat(states(merchant, List.copyOf(ids))).containsOnlyKeys("sent", "sending");
            } else {
                assertThat(confirmedOverTheNewHolder).as("negative control: stale confirms accepted").isPositive();
            }
        }
    }

    /**
     * The worker claims a slot's worth of rows in one statement. One row of them is owned by a
     * higher token: the whole claim is rolled back, nothing reaches the gateway, and the worker
     * stops. Without the fence the claim takes that row too and the worker refunds it.
     */
    @ParameterizedTest(name = "fencing {0}")
    @ValueSource(booleans = {true, false})
    void aBatchClaimWithOneRowOwnedByAHigherTokenIsRolledBackWhole(boolean fencing) throws Exception {
        String merchant = freshMerchant();
        String prefix = merchant + "_r";
        RefundSeeder.seed(db, merchant, prefix, 8, new BigDecimal("80.00"), "EUR");
        String owned = RefundSeeder.refundId(prefix, 5);
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            SettlementOutcome outcome = worker(gateway).concurrency(8).variant(LabVariants.of(fencing, true, false))
                    .listener(event -> {
                        if (event.type() == SettlementEvent.Type.ACQUIRED) {
                            // Another holder's higher token reached the row first; it is still pending.
                            fenceRow(owned, event.token() + 1);
                        }
                    })
                    .build().settle(merchant);
            List<String> refunded = gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).map(GatewayRefund::reference).toList();
            if (fencing) {
                assertThat(outcome.result()).isEqualTo(Result.FENCE_VIOLATION);
                assertThat(outcome.violation().rowId()).isEqualTo(owned);
                assertThat(refunded).isEmpty();
                assertThat(states(merchant)).as("the claims of the other seven rows were rolled back").containsOnly(Map.entry("pending", 8L));
            } else {
                assertThat(refunded).as("negative control: the owned row is refunded by the stale claim").contains(owned);
            }
        }
    }

    private static void fenceRow(String id, long fence) {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("UPDATE refund SET fence = ? WHERE id = ?")) {
            s.setLong(1, fence);
            s.setString(2, id);
            s.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, Long> states(String merchant, List<?> ids) throws SQLException {
        Map<String, Long> counts = new TreeMap<>();
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("SELECT state FROM refund WHERE merchant = ? AND id = ?")) {
            for (Object id : ids) {
                s.setString(1, merchant);
                s.setString(2, (String) id);
                try (ResultSet rs = s.executeQuery()) {
                    while (rs.next()) {
                        counts.merge(rs.getString(1), 1L, Long::sum);
                    }
                }
            }
        }
        return counts;
    }

    private static Map<String, Long> states(String merchant) throws SQLException {
        return states(merchant, IntStream.rangeClosed(1, 8).mapToObj(n -> RefundSeeder.refundId(merchant + "_r", n)).toList());
    }
}
