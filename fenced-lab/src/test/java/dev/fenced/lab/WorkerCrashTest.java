package dev.fenced.lab;

import dev.fenced.cli.SettleCommand;
import dev.fenced.cli.Connections;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A worker process is SIGKILLed between its claim and its gateway call, or between the gateway's
 * answer and its confirm; a second worker process then finishes the batch. Every refund must reach
 * the gateway exactly once.
 */
class WorkerCrashTest {
    private static HikariDataSource db;

    @BeforeAll
    static void connect() {
        db = Connections.database(TestDatabases.postgresUrl(), 2);
    }

    @AfterAll
    static void close() {
        db.close();
    }

    @ParameterizedTest(name = "killed {0}")
    @ValueSource(strings = {"after-claim", "after-gateway"})
    void aSecondWorkerFinishesAfterASigkillAndEveryRefundIsSentExactlyOnce(String phase) {
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        String prefix = merchant + "_r";
        RefundSeeder.seed(db, merchant, prefix, 30, new BigDecimal("300.00"), "EUR");
        String victim = RefundSeeder.refundId(prefix, 12);
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(1)).build())) {
            Map<String, String> env = Map.of("FENCED_REDIS_URL", TestRedis.uri(), "FENCED_DB_URL", TestDatabases.postgresUrl(),
                    "FENCED_GATEWAY_URL", gateway.url());
            List<String> settle = List.of("lab-settle", "--merchant", merchant, "--ttl", "2s", "--events");
            try (WorkerProcess first = WorkerProcess.start("first", concat(settle, "--name", "first", "--pause-at", phase + ":" + victim), env)) {
                first.awaitEvent(Events.ofType(SettlementEvent.Type.BREAKPOINT), Duration.ofMinutes(2), "the breakpoint");
                first.signal("KILL");
                first.awaitExit(Duration.ofSeconds(30));
            }
            // The queue hands the job to another worker until one finishes it: the dead worker's lease
            // may still be live (exit 4), or a loaded machine may delay a renewal past the TTL (exit 5).
            int exit = -1;
            for (int attempt = 1; attempt <= 5 && exit != 0; attempt++) {
                try (WorkerProcess next = WorkerProcess.start("next-" + attempt, concat(settle, "--name", "next-" + attempt), env)) {
                    exit = next.awaitExit(Duration.ofMinutes(2));
                }
                assertThat(exit).as("exit code of attempt %d", attempt).isIn(0, SettleCommand.LEASE_BUSY, SettleCommand.LEASE_LOST);
                if (exit != 0) {
                    awaitNoHolder(merchant);
                }
            }
            assertThat(exit).isZero();
            List<GatewayRefund> mine = gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).toList();
            assertThat(mine).hasSize(30);
            assertThat(mine.stream().map(GatewayRefund::reference).distinct().count()).isEqualTo(30);
            assertThat(mine.stream().map(GatewayRefund::amount).reduce(BigDecimal.ZERO, BigDecimal::add)).isEqualByComparingTo("300.00");
        }
    }

    /** Waits until the merchant's lease is free (the dead holder's TTL ran out), as a queue's redelivery would. */
    private static void awaitNoHolder(String merchant) {
        try (dev.fenced.redis.RedisLeaseStore leases = dev.fenced.redis.RedisLeaseStore.builder(TestRedis.uri()).build()) {
            // the TTL runs on Redis's clock: nothing here can move it, so wait for the key to go
            await("the dead holder's lease of " + merchant + " running out").atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> leases.inspect(dev.fenced.settlement.Merchants.resource(merchant)).holder() == null);
        }
    }

    private static List<String> concat(List<String> head, String... tail) {
        List<String> out = new java.util.ArrayList<>(head);
        out.addAll(List.of(tail));
        return out;
    }
}
