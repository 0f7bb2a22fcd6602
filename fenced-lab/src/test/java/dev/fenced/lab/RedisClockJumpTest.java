package dev.fenced.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.cli.Connections;
import dev.fenced.embedded.MovableClockRedis;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementOutcome;
import dev.fenced.settlement.SettlementOutcome.Result;
import dev.fenced.settlement.SettlementWorker;
import dev.fenced.testing.servers.TestDatabases;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Redis's clock jumps forward while a holder is alive and running: its 30 s lease ends at once, by
 * Redis's clock, a few hundred milliseconds after it was granted by the JVM's, and a second worker
 * takes the merchant over (an early takeover) and settles it. The first goes on to confirm the
 * refund it had sent: with the fence the database refuses it and it stops; the control without the
 * fence has its stale confirm accepted, and the stale holder believes it finished. Either way the
 * gateway refunds each row once: its idempotency keys hold what the lease did not. Redis runs under
 * libfaketime ({@link MovableClockRedis}); the JVM's clock is left alone.
 */
class RedisClockJumpTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private static HikariDataSource db;
    private static MovableClockRedis redis;
    private static RedisLeaseStore leases;

    /** Skips a test on a machine without libfaketime, never in CI, which installs it. */
    static void requireLibfaketime() {
        assumeTrue(MovableClockRedis.libfaketime().isPresent() || System.getenv("CI") != null,
                "libfaketime is not installed (apt-get install faketime)");
    }

    @BeforeAll
    static void start(@TempDir Path dir) {
        requireLibfaketime();
        redis = MovableClockRedis.start(dir);
        db = Connections.database(TestDatabases.postgresUrl(), 8);
        leases = Connections.leases(redis.uri(), db, "clock-jump-test");
    }

    @AfterAll
    static void stop() {
        if (leases != null) {
            leases.close();
        }
        if (db != null) {
            db.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @ParameterizedTest(name = "fencing {0}")
    @ValueSource(booleans = {true, false})
    void aClockJumpEndsALiveLeaseAndOnlyTheFenceStopsTheStaleHolder(boolean fencing) throws Exception {
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        String prefix = merchant + "_r";
        RefundSeeder.seed(db, merchant, prefix, 12, new BigDecimal("843.00"), "EUR");
        String stalled = RefundSeeder.refundId(prefix, 5);
        AtomicLong tokenA = new AtomicLong();
        AtomicLong grantedA = new AtomicLong();
        AtomicReference<SettlementOutcome> outcomeB = new AtomicReference<>();
        AtomicLong grantedB = new AtomicLong();
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            Function<String, SettlementWorker.Builder> worker = name -> SettlementWorker.builder().leaseStore(leases).dataSource(db)
                    .gateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(2))).ttl(TTL).name(name)
                    .variant(LabVariants.of(fencing, true, false));
            SettlementOutcome outcomeA = worker.apply("A")
                    .listener(event -> {
                        if (event.type() == SettlementEvent.Type.ACQUIRED) {
                            tokenA.set(event.token());
                            grantedA.set(System.nanoTime());
                        }
                    })
                    .phaseHook((phase, refundId) -> {
                        if (phase == SettlementWorker.Phase.BEFORE_CONFIRM && refundId.equals(stalled)) {
                            // A has sent r_5 and is about to confirm it; Redis's clock steps a minute forward.
                            redis.moveClockForward(Duration.ofSeconds(60));
                            outcomeB.set(worker.apply("B").listener(event -> {
                                if (event.type() == SettlementEvent.Type.ACQUIRED) {
                                    grantedB.set(System.nanoTime());
                                }
                            }).build().settle(merchant));
                        }
                    })
                    .build().settle(merchant);

            SettlementOutcome b = outcomeB.get();
            assertThat(b.result()).as("B, after the jump").isEqualTo(Result.COMPLETED);
            assertThat(b.token()).as("B's token").isGreaterThan(tokenA.get());
            Duration takeoverAfter = Duration.ofNanos(grantedB.get() - grantedA.get());
            assertThat(takeoverAfter).as("an early takeover: B's lease granted while A's TTL had not run out by the JVM's clock")
                    .isLessThan(TTL);
            Map<String, Long> refundsPerRow = gateway.ledger().stream().filter(r -> r.merchant().equals(merchant))
                    .collect(Collectors.groupingBy(GatewayRefund::reference, Collectors.counting()));
            assertThat(refundsPerRow).as("every row refunded exactly once at the gateway").hasSize(12).allSatisfy((row, n) -> assertThat(n).isOne());
            if (fencing) {
                assertThat(outcomeA.result()).as("A, stale after the jump").isEqualTo(Result.FENCE_VIOLATION);
                assertThat(outcomeA.violation().rowId()).isEqualTo(stalled);
                assertThat(outcomeA.violation().storedFence()).isEqualTo(b.token());
            } else {
                assertThat(outcomeA.result()).as("negative control: the stale holder's confirm is accepted").isEqualTo(Result.COMPLETED);
                assertThat(outcomeA.sent()).as("rows the stale holder recorded as its own").isPositive();
            }
            System.out.printf("clock jump (fencing %s): Redis's clock +60 s, A token %d granted, B took over %d ms later with token %d;"
                            + " A ended %s; early takeovers 1%n", fencing, tokenA.get(), takeoverAfter.toMillis(), b.token(),
                    outcomeA.result());
        }
    }
}
