package dev.fenced.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.cli.Connections;
import dev.fenced.cli.EventLine;
import dev.fenced.cli.FencedCli;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementOutcome;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * No holder waits forever on another. Worker A, a real process, claims r_003 and is frozen with
 * SIGSTOP inside that claim's transaction: its row locked, its lease left to expire. Worker B, the
 * operator's {@code fenced settle}, takes the lease; its claim of r_003 gives up after its lock
 * wait (a third of its 6 s TTL), and B exits 15 with one line naming the row and the wait, its lease
 * released, no row written under its token. Control: B with every database bound switched off is
 * still waiting after three times the bound; once A is resumed, B takes the row over and finishes.
 * On PostgreSQL and MariaDB.
 */
class StalledClaimTest {
    private static final Duration LONG = Duration.ofMinutes(2);
    /** B's lock wait: a third of its TTL. */
    private static final Duration BOUND = Duration.ofSeconds(2);

    @ParameterizedTest(name = "{0}, bounded {1}")
    @CsvSource({"postgresql, true", "postgresql, false", "mariadb, true", "mariadb, false"})
    void aClaimBehindAWorkerFrozenInsideItsClaimTransactionGivesUpAfterTheLockWait(String database, boolean bounded) throws Exception {
        String url = database.equals("postgresql") ? TestDatabases.postgresUrl() : mariadbUrl();
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        String r3 = RefundSeeder.refundId(merchant + "_r", 3);
        try (HikariDataSource db = Connections.database(url, 2);
             RedisLeaseStore leases = RedisLeaseStore.builder(TestRedis.uri()).build();
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(1)).build())) {
            RefundSeeder.seed(db, merchant, merchant + "_r", 6, new BigDecimal("60.00"), "EUR");
            Map<String, String> env = Map.of("FENCED_REDIS_URL", TestRedis.uri(), "FENCED_DB_URL", url, "FENCED_GATEWAY_URL", gateway.url());
            try (WorkerProcess a = WorkerProcess.start("A", List.of("lab-settle", "--merchant", merchant, "--name", "A", "--events",
                    "--ttl", "2s", "--pause-at", "in-claim:" + r3), env)) {
                a.awaitEvent(Events.ofType(SettlementEvent.Type.BREAKPOINT), LONG, "A inside its claim of " + r3);
                a.signal("STOP");
                long tokenA = Events.token(a.firstEvent(Events.ofType(SettlementEvent.Type.ACQUIRED)).orElseThrow());
                awaitLeaseGone(leases, merchant, "A's lease, which a frozen process cannot renew, expired");

                List<String> settle = new ArrayList<>(List.of("settle", "--merchant", merchant, "--name", "B", "--events", "--ttl", "6s"));
                if (!bounded) {
                    settle.addAll(List.of("--lock-timeout", "0s", "--statement-timeout", "0s", "--db-socket-timeout", "0s"));
                }
                try (WorkerProcess b = WorkerProcess.start("B", settle, env)) {
                    EventLine acquired = b.awaitEvent(Events.ofType(SettlementEvent.Type.ACQUIRED), LONG, "B's lease");
                    long tokenB = Events.token(acquired);
                    if (!bounded) {
                        assertThatThrownBy(() -> b.awaitExit(BOUND.multipliedBy(3))).as("control: B still waiting after three times the bound")
                                .hasMessageContaining("still running");
                        assertThat(b.firstEvent(Events::isResult)).isEmpty();
                        a.signal("CONT");
                        a.writeLine("go");
                        assertThat(b.awaitExit(LONG)).as("B, once A's claim committed: %s", b.stderrTail()).isZero();
                        a.awaitExit(LONG);
                        assertPaidOnce(gateway, merchant, 6);
                        return;
                    }
                    assertThat(b.awaitExit(LONG)).as("B's exit code: %s", b.stderrTail()).isEqualTo(FencedCli.DATABASE_WAIT);
                    EventLine.Result result = (EventLine.Result) b.firstEvent(Events::isResult).orElseThrow();
                    assertThat(result.result()).isEqualTo(SettlementOutcome.Result.DATABASE_WAIT);
                    assertThat(result.error()).matches("claim of " + r3 + " waited [0-9.]+ s for a row lock held by another session; gave up");
                    assertThat(result.at() - acquired.at()).as("B ended within three times the bound").isLessThan(BOUND.multipliedBy(3).toMillis());
                    assertThat(b.firstEvent(Events.ofType(SettlementEvent.Type.DATABASE_WAIT).and(Events.about(r3)))).isPresent();
                    assertThat(leases.inspect(Merchants.resource(merchant)).holder()).as("B's lease released").isNull();
                    assertThat(fences(db, merchant)).as("no row written under B's token").doesNotContain(tokenB)
                            .containsOnly(0L, tokenA);
                    assertThat(states(db, merchant)).as("A's two sent, the rest pending: nothing parked")
                            .containsExactly("sent", "sent", "pending", "pending", "pending", "pending");
                }
                a.signal("CONT");
                a.writeLine("go");
                a.awaitExit(LONG);
            }
            try (WorkerProcess c = WorkerProcess.start("C", List.of("settle", "--merchant", merchant, "--name", "C", "--events", "--ttl", "6s"),
                    env)) {
                assertThat(c.awaitExit(LONG)).as("the next run finishes: %s", c.stderrTail()).isZero();
            }
            assertPaidOnce(gateway, merchant, 6);
        }
    }

    private static String mariadbUrl() {
        TestDatabases.mariadb(); // skips outside CI when no MariaDB is configured, fails in CI
        return TestDatabases.mariadbUrl().orElseThrow();
    }

    private static void awaitLeaseGone(RedisLeaseStore leases, String merchant, String reason) {
        org.awaitility.Awaitility.await(reason).atMost(LONG).pollInterval(Duration.ofMillis(20))
                .until(() -> leases.inspect(Merchants.resource(merchant)).holder() == null);
    }

    private static List<Long> fences(HikariDataSource db, String merchant) throws Exception {
        return column(db, merchant, "fence").stream().map(Long::valueOf).toList();
    }

    private static List<String> states(HikariDataSource db, String merchant) throws Exception {
        return column(db, merchant, "state");
    }

    private static List<String> column(HikariDataSource db, String merchant, String column) throws Exception {
        try (Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT " + column + " FROM refund WHERE merchant = ? ORDER BY seq")) {
            s.setString(1, merchant);
            List<String> values = new ArrayList<>();
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    values.add(rs.getString(1));
                }
            }
            return values;
        }
    }

    private static void assertPaidOnce(PaymentGateway gateway, String merchant, int refunds) {
        List<GatewayRefund> mine = gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).toList();
        assertThat(mine).hasSize(refunds);
        assertThat(mine.stream().map(GatewayRefund::reference).distinct().count()).isEqualTo(refunds);
    }
}
