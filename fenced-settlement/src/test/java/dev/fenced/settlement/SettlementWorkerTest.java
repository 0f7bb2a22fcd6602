package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.Lease;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.SettlementOutcome.Result;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The worker against a real Redis, a real PostgreSQL and the gateway over real HTTP. */
class SettlementWorkerTest {
    private static HikariDataSource db;
    private static RedisLeaseStore leases;

    @BeforeAll
    static void start() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestDatabases.postgresUrl());
        config.setMaximumPoolSize(12);
        db = new HikariDataSource(config);
        RefundSchema.migrate(db);
        leases = RedisLeaseStore.builder(TestRedis.uri())
                .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf)))
                .build();
    }

    @AfterAll
    static void stop() {
        leases.close();
        db.close();
    }

    /** An application's own provider adapter over the HTTP gateway: each test overrides what it watches. */
    private abstract static class Adapter implements dev.fenced.provider.RefundGateway {
        private final GatewayClient http;

        Adapter(GatewayClient http) {
            this.http = http;
        }

        @Override
        public java.util.Optional<GatewayRefund> findByKey(String key) {
            return http.findByKey(key);
        }

        @Override
        public List<GatewayRefund> refundsOf(String merchantId) {
            return http.refundsOf(merchantId);
        }
    }

    private static String freshMerchant() {
        return "m_" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static SettlementWorker.Builder worker(PaymentGateway gateway) {
        return SettlementWorker.builder().leaseStore(leases).dataSource(db)
                .gateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(2))).ttl(Duration.ofSeconds(10));
    }

    @Test
    void settlesEveryRefundExactlyOnceWithTheRightAmount() throws Exception {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", 60, new BigDecimal("4215.00"), "EUR");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(2)).build())) {
            List<SettlementEvent> events = new CopyOnWriteArrayList<>();
            SettlementOutcome outcome = worker(gateway).concurrency(1).listener(events::add).build().settle(merchant);
            assertThat(outcome.result()).isEqualTo(Result.COMPLETED);
            assertThat(outcome.sent()).isEqualTo(60);
            assertExactlyOnce(gateway.ledger(), merchant, 60);
            assertThat(states(merchant)).containsExactly(Map.entry("sent", 60L));
            assertThat(events).extracting(SettlementEvent::type).contains(SettlementEvent.Type.ACQUIRED, SettlementEvent.Type.CLAIMED,
                    SettlementEvent.Type.CONFIRMED, SettlementEvent.Type.RELEASED, SettlementEvent.Type.OUTCOME);
            assertThat(leases.inspect(Merchants.resource(merchant)).holder()).as("lease released").isNull();
        }
    }

    /**
     * The worker sees the provider only through {@link dev.fenced.provider.RefundGateway}: an
     * application's own adapter (here one that counts the calls it passes to the HTTP gateway) is
     * all it needs.
     */
    @Test
    void theWorkerRunsAgainstTheApplicationsOwnProviderAdapter() throws Exception {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", 5, new BigDecimal("50.00"), "EUR");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            GatewayClient http = GatewayClient.of(gateway.url(), Duration.ofSeconds(2));
            AtomicInteger creates = new AtomicInteger();
            dev.fenced.provider.RefundGateway provider = new Adapter(http) {
                @Override
                public GatewayRefund createRefund(String key, String reference, String merchantId, BigDecimal amount, String currency) {
                    creates.incrementAndGet();
                    return http.createRefund(key, reference, merchantId, amount, currency);
                }
            };
            SettlementOutcome outcome = SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(provider)
                    .ttl(Duration.ofSeconds(10)).build().settle(merchant);
            assertThat(outcome.result()).isEqualTo(Result.COMPLETED);
            assertThat(creates).hasValue(5);
            assertExactlyOnce(gateway.ledger(), merchant, 5);
        }
    }

    /**
     * One refund's calls must end well inside the provider's key retention: a configuration whose
     * attempts (here 5 of at most 10 s each, with backoff and the longest Retry-After honoured, and a
     * closing lookup) could outlast the
     * margin kept before the retention ends is refused at build, with both durations named; so is
     * a margin not below the retention. Control: the same attempts with a margin they fit in build.
     */
    @Test
    void retriesThatCouldOutliveTheKeyRetentionAreRefusedAtBuild() {
        SettlementWorker.Builder slow = SettlementWorker.builder().leaseStore(leases).dataSource(db)
                .gateway(GatewayClient.of("http://127.0.0.1:9", Duration.ofSeconds(10))).gatewayAttempts(5);
        assertThatThrownBy(() -> slow.keyRetention(Duration.ofMinutes(10), Duration.ofSeconds(60)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("may take up to PT3M31.5S").hasMessageContaining("key retention margin PT1M")
                .hasMessageContaining("retention PT10M");
        assertThatThrownBy(() -> slow.keyRetention(Duration.ofMinutes(10), Duration.ofMinutes(10)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("less than the key retention");
        assertThatThrownBy(() -> slow.keyRetention(Duration.ZERO, Duration.ofSeconds(1)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key retention must be positive");
        assertThat(slow.keyRetention(Duration.ofMinutes(10), Duration.ofSeconds(212)).build()).isNotNull();
        assertThat(GatewayCalls.longestCreate(5, Duration.ofMillis(100), Duration.ofSeconds(10)))
                .as("6 calls of 10 s; 5 attempts each after 30 s of Retry-After; backoffs 0.1 + 0.2 + 0.4 + 0.8 s")
                .isEqualTo(Duration.ofMillis(211_500));
    }

    /**
     * A provider that refuses the credentials (401) will refuse every request until someone fixes
     * the configuration: the run stops at the first refusal, puts that refund back, marks nothing
     * failed, and fails with a line that says so and never the key. With 2 or 4 in flight the rows
     * it claimed ahead and never sent go back to pending too (with 2, too few refusals to count as
     * the gateway down: the refused credentials alone must put them back). Control: the right key
     * settles every refund.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "wrong key: {0}, {1} in flight")
    @org.junit.jupiter.params.provider.CsvSource({"true, 1", "false, 1", "true, 2", "true, 4"})
    void refusedCredentialsStopTheRunAtOnceAndFailNothing(boolean wrongKey, int inFlight) throws Exception {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", 20, new BigDecimal("200.00"), "EUR");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).apiKey("sk_test_right").build())) {
            String key = wrongKey ? "sk_test_wrong" : "sk_test_right";
            List<SettlementEvent> events = new CopyOnWriteArrayList<>();
            // With refunds in parallel the run's tasks claim the next rows while the first are in flight; the first calls
            // wait until they have (two batches of claims), so that a refusal cannot stop the run before it claims ahead.
            AtomicReference<RuntimeException> notClaimedAhead = new AtomicReference<>();
            SettlementWorker.PhaseHook claimedAhead = (phase, id) -> {
                if (phase == SettlementWorker.Phase.AFTER_CLAIM && inFlight > 1) {
                    try {
                        await("the run claimed the next " + inFlight + " rows").atMost(Duration.ofSeconds(10))
                                .until(() -> events.stream().filter(e -> e.type() == SettlementEvent.Type.CLAIMED).count() >= 2L * inFlight);
                    } catch (RuntimeException e) {
                        notClaimedAhead.compareAndSet(null, e);
                        throw e;
                    }
                }
            };
            SettlementOutcome outcome = SettlementWorker.builder().leaseStore(leases).dataSource(db)
                    .gateway(GatewayClient.of(gateway.url().replace("http://", "http://" + key + ":@"), Duration.ofSeconds(2)))
                    .concurrency(inFlight).ttl(Duration.ofSeconds(10)).listener(events::add).phaseHook(claimedAhead).build().settle(merchant);
            assertThat(notClaimedAhead.get()).as("the first calls saw the run claim ahead").isNull();
            if (!wrongKey) {
                assertThat(outcome.result()).isEqualTo(Result.COMPLETED);
                assertExactlyOnce(gateway.ledger(), merchant, 20);
                return;
            }
            assertThat(outcome.result()).isEqualTo(Result.FAILED);
            assertThat(outcome.error()).contains("refused the credentials").contains("401").doesNotContain("sk_test");
            assertThat(events).as("no event names the key").noneMatch(e -> String.valueOf(e.detail()).contains("sk_test"));
            if (inFlight == 1) {
                assertThat(events).filteredOn(e -> e.type() == SettlementEvent.Type.CLAIMED).as("stopped at the first refund").hasSize(1);
            } else {
                assertThat(events).filteredOn(e -> e.type() == SettlementEvent.Type.CLAIMED).as("claimed ahead, then stopped")
                        .hasSize(2 * inFlight);
                // With 2, too few refusals in a row to count as the gateway down: the error alone puts them back.
                assertThat(events).filteredOn(e -> e.type() == SettlementEvent.Type.LEFT)
                        .filteredOn(e -> String.valueOf(e.detail()).contains(inFlight == 2 ? "never sent before the run failed"
                                : "never sent before the gateway went down"))
                        .as("the rows claimed ahead, put back").hasSize(inFlight);
            }
            assertThat(states(merchant)).as("every claimed row put back, sent or not").containsExactly(Map.entry("pending", 20L));
            assertThat(gateway.ledger()).isEmpty();
        }
    }

    /**
     * A provider that rate-limits (429 with Retry-After: 1) is left alone for that second: no
     * request of the run starts before it is over, and every refund is still paid once. Control:
     * the same 429s with Retry-After: 0 are retried after the backoff (100 ms), so the gap the
     * assertion measures is shorter.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "Retry-After 0: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void aRateLimitedRunWaitsTheRetryAfterBeforeItsNextRequest(boolean control) throws Exception {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", 8, new BigDecimal("80.00"), "EUR");
        Duration retryAfter = control ? Duration.ZERO : Duration.ofSeconds(1);
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).seed(7)
                .rateLimited(0.3, retryAfter).build())) {
            GatewayClient http = GatewayClient.of(gateway.url(), Duration.ofSeconds(2));
            List<long[]> calls = new CopyOnWriteArrayList<>(); // {started, ended, 1 for a 429}, in nanoTime
            dev.fenced.provider.RefundGateway recorded = new Adapter(http) {
                @Override
                public GatewayRefund createRefund(String key, String reference, String merchantId, BigDecimal amount, String currency) {
                    long started = System.nanoTime();
                    int limited = 0;
                    try {
                        return http.createRefund(key, reference, merchantId, amount, currency);
                    } catch (dev.fenced.provider.GatewayException e) {
                        limited = e.status() == 429 ? 1 : 0;
                        throw e;
                    } finally {
                        calls.add(new long[] {started, System.nanoTime(), limited});
                    }
                }
            };
            SettlementOutcome outcome = SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(recorded)
                    .ttl(Duration.ofSeconds(30)).gatewayAttempts(6).gatewayFailureLimit(10).build().settle(merchant);
            assertThat(outcome.result()).isEqualTo(Result.COMPLETED);
            assertExactlyOnce(gateway.ledger(), merchant, 8);
            List<long[]> inOrder = calls.stream().sorted(java.util.Comparator.comparingLong(c -> c[0])).toList();
            long shortestGapAfter429 = Long.MAX_VALUE;
            int limited = 0;
            for (int i = 0; i < inOrder.size() - 1; i++) {
                if (inOrder.get(i)[2] == 1) {
                    limited++;
                    shortestGapAfter429 = Math.min(shortestGapAfter429, inOrder.get(i + 1)[0] - inOrder.get(i)[1]);
                }
            }
            assertThat(limited).as("the seed draws some 429s").isGreaterThan(0);
            if (control) {
                assertThat(Duration.ofNanos(shortestGapAfter429)).as("control: only the backoff").isLessThan(Duration.ofSeconds(1));
            } else {
                assertThat(Duration.ofNanos(shortestGapAfter429)).as("no request inside the Retry-After").isGreaterThanOrEqualTo(Duration.ofSeconds(1));
            }
        }
    }

    /**
     * 200 refunds, 8 in flight under one token: each settled once, never more than 8 gateway calls
     * out at once nor more than 3 × 8 rows claimed and not yet confirmed (claimed ahead, in flight,
     * waiting for their confirm), and more than one call out at once. The run's tasks take their
     * rows themselves: it hands at most 2 × 8 tasks to the shared threads, where a loop that handed
     * each refund over made 200 hand-overs.
     */
    @Test
    void manyRefundsInFlightUnderOneToken() throws Exception {
        String merchant = freshMerchant();
        int concurrency = 8;
        RefundSeeder.seed(db, merchant, merchant + "_r", 200, new BigDecimal("14050.00"), "EUR");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(10)).build())) {
            GatewayClient http = GatewayClient.of(gateway.url(), Duration.ofSeconds(2));
            AtomicInteger calling = new AtomicInteger();
            AtomicInteger mostCalling = new AtomicInteger();
            dev.fenced.provider.RefundGateway counted = new Adapter(http) {
                @Override
                public GatewayRefund createRefund(String key, String reference, String merchantId, BigDecimal amount, String currency) {
                    mostCalling.accumulateAndGet(calling.incrementAndGet(), Math::max);
                    try {
                        return http.createRefund(key, reference, merchantId, amount, currency);
                    } finally {
                        calling.decrementAndGet();
                    }
                }
            };
            AtomicLong unconfirmed = new AtomicLong();
            AtomicLong mostUnconfirmed = new AtomicLong();
            SettlementListener claimsAndConfirms = event -> {
                if (event.type() == SettlementEvent.Type.CLAIMED) {
                    mostUnconfirmed.accumulateAndGet(unconfirmed.incrementAndGet(), Math::max);
                } else if (event.type() == SettlementEvent.Type.CONFIRMED) {
                    unconfirmed.decrementAndGet();
                }
            };
            long handedOverBefore = RunTasks.handedOver();
            SettlementOutcome outcome = SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(counted)
                    .ttl(Duration.ofSeconds(10)).concurrency(concurrency).listener(claimsAndConfirms).build().settle(merchant);
            long handedOver = RunTasks.handedOver() - handedOverBefore;
            assertThat(outcome.result()).isEqualTo(Result.COMPLETED);
            assertExactlyOnce(gateway.ledger(), merchant, 200);
            assertThat(mostCalling.get()).as("gateway calls out at once").isBetween(2, concurrency);
            assertThat(mostUnconfirmed.get()).as("rows claimed, not yet confirmed").isLessThanOrEqualTo(3L * concurrency);
            assertThat(handedOver).as("tasks handed to the shared threads").isBetween(1L, 2L * concurrency);
        }
    }

    /**
     * An interrupt of the settling thread is a stop: the run takes no row after it, the refunds in
     * flight finish and are confirmed, the rows it claimed ahead go back to pending, and it ends
     * STOPPED, its thread's interrupt flag still set; the next run settles the rest, each refund
     * once. Control: the same run not interrupted completes (the next run finds nothing).
     */
    @ParameterizedTest(name = "interrupted: {0}")
    @ValueSource(booleans = {true, false})
    void anInterruptStopsTheRunAndLeavesNoRowSending(boolean interrupt) throws Exception {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", 200, new BigDecimal("2000.00"), "EUR");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(20)).build())) {
            List<SettlementEvent> events = new CopyOnWriteArrayList<>();
            AtomicReference<SettlementOutcome> outcome = new AtomicReference<>();
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicBoolean flagSetAfter = new AtomicBoolean();
            Thread settling = new Thread(() -> {
                try {
                    outcome.set(worker(gateway).concurrency(4).ttl(Duration.ofSeconds(30)).listener(events::add).build().settle(merchant));
                } catch (Throwable e) {
                    thrown.set(e);
                }
                flagSetAfter.set(Thread.currentThread().isInterrupted());
            });
            settling.start();
            // 200 refunds at 20 ms, four at a time, take a second at least: interrupted once the first are confirmed.
            await("the first confirms").atMost(Duration.ofSeconds(10))
                    .until(() -> events.stream().filter(e -> e.type() == SettlementEvent.Type.CONFIRMED).count() >= 8);
            if (interrupt) {
                settling.interrupt();
            }
            settling.join(Duration.ofSeconds(60).toMillis());
            assertThat(settling.isAlive()).as("the run ended").isFalse();
            assertThat(thrown.get()).isNull();
            if (!interrupt) {
                assertThat(outcome.get().result()).isEqualTo(Result.COMPLETED);
                assertThat(states(merchant)).containsExactly(Map.entry("sent", 200L));
                assertThat(flagSetAfter).isFalse();
                return;
            }
            assertThat(outcome.get().result()).isEqualTo(Result.STOPPED);
            assertThat(flagSetAfter).as("the interrupt flag, still set").isTrue();
            Map<String, Long> left = states(merchant);
            assertThat(left).as("sent or pending, none in doubt").containsOnlyKeys("sent", "pending");
            assertThat(left.get("sent")).isEqualTo(outcome.get().sent());
            assertThat(events).filteredOn(e -> e.type() == SettlementEvent.Type.LEFT)
                    .allMatch(e -> String.valueOf(e.detail()).contains("never sent before the stop"));
            assertThat(leases.inspect(Merchants.resource(merchant)).holder()).as("lease released").isNull();

            SettlementOutcome next = worker(gateway).concurrency(4).build().settle(merchant);
            assertThat(next.result()).isEqualTo(Result.COMPLETED);
            assertThat(outcome.get().sent() + next.sent()).isEqualTo(200);
            assertExactlyOnce(gateway.ledger(), merchant, 200);
        }
    }

    /**
     * A listener that throws on every claim (one in flight and eight) changes nothing: the run
     * completes, every refund sent once, no row left {@code sending}. Before, the exception
     * escaped the claim after it had committed: the run failed and the rows it had just claimed
     * stayed {@code sending}, for the next holder to look up. Control: the same run with a listener
     * that does not throw.
     */
    @ParameterizedTest(name = "in flight {0}, listener throws: {1}")
    @CsvSource({"1, true", "8, true", "8, false"})
    void aListenerThatThrowsChangesNothing(int concurrency, boolean throwing) throws Exception {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", 40, new BigDecimal("400.00"), "EUR");
        AtomicInteger thrown = new AtomicInteger();
        SettlementListener listener = event -> {
            if (throwing && event.type() == SettlementEvent.Type.CLAIMED) {
                thrown.incrementAndGet();
                throw new IllegalStateException("a listener's own bug");
            }
        };
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().build())) {
            SettlementOutcome outcome = worker(gateway).concurrency(concurrency).listener(listener).build().settle(merchant);
            assertThat(outcome.result()).isEqualTo(Result.COMPLETED);
            assertThat(outcome.sent()).isEqualTo(40);
            assertThat(states(merchant)).containsExactly(Map.entry("sent", 40L));
            assertExactlyOnce(gateway.ledger(), merchant, 40);
        }
        assertThat(thrown.get()).as("the listener threw on every claim").isEqualTo(throwing ? 40 : 0);
    }

    /**
     * Runs one after another, each by a new worker as a fleet worker makes one per merchant, send
     * their refunds from the same threads: a run starts no threads of its own for its refunds (its
     * one confirm thread aside). Three runs of 8 in flight, each holding at most 2 × 8 tasks at
     * once, were sent by at most 1.5x that (15 here); with a pool per run, as before, by 48. More
     * than one thread sent them: the refunds did go out side by side.
     */
    @Test
    void runsOneAfterAnotherSendFromTheSameThreads() throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(10)).build())) {
            GatewayClient http = GatewayClient.of(gateway.url(), Duration.ofSeconds(2));
            java.util.Set<Thread> senders = java.util.concurrent.ConcurrentHashMap.newKeySet();
            dev.fenced.provider.RefundGateway provider = new Adapter(http) {
                @Override
                public GatewayRefund createRefund(String key, String reference, String merchantId, BigDecimal amount, String currency) {
                    senders.add(Thread.currentThread());
                    return http.createRefund(key, reference, merchantId, amount, currency);
                }
            };
            for (int run = 0; run < 3; run++) {
                String merchant = freshMerchant();
                RefundSeeder.seed(db, merchant, merchant + "_r", 48, new BigDecimal("3372.00"), "EUR");
                SettlementOutcome outcome = SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(provider)
                        .ttl(Duration.ofSeconds(10)).concurrency(8).build().settle(merchant);
                assertThat(outcome.result()).isEqualTo(Result.COMPLETED);
                assertExactlyOnce(gateway.ledger(), merchant, 48);
            }
            assertThat(senders).as("threads that sent the three runs' refunds").hasSizeLessThanOrEqualTo(24).hasSizeGreaterThan(1);
        }
    }

    @Test
    void aLiveLeaseKeepsASecondWorkerOutAndNothingIsWritten() throws Exception {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", 5, new BigDecimal("50.00"), "EUR");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build());
             Lease held = leases.tryAcquire(Merchants.resource(merchant), Duration.ofSeconds(30)).orElseThrow()) {
            SettlementOutcome outcome = worker(gateway).build().settle(merchant);
            assertThat(outcome.result()).isEqualTo(Result.LEASE_BUSY);
            assertThat(gateway.ledger()).isEmpty();
            assertThat(states(merchant)).containsExactly(Map.entry("pending", 5L));
            assertThat(held.release()).isTrue();
        }
    }

    @Test
    void aRowLeftInSendingIsLookedUpAtTheGatewayAndNotSentTwice() throws Exception {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", 10, new BigDecimal("100.00"), "EUR");
        String stuck = RefundSeeder.refundId(merchant + "_r", 4);
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            // A holder with a lower token claimed the row and called the gateway, then died before confirming.
            long deadHoldersToken;
            try (Lease dead = leases.tryAcquire(Merchants.resource(merchant), Duration.ofSeconds(30)).orElseThrow()) {
                deadHoldersToken = dead.token();
                FencedRows.of(RefundSchema.table()).claim(db, stuck, dead.token());
                GatewayClient.of(gateway.url(), Duration.ofSeconds(2)).createRefund(key(stuck), stuck, merchant, amounts(merchant).get(stuck), "EUR");
            }
            SettlementOutcome outcome = worker(gateway).build().settle(merchant);
            assertThat(outcome.result()).isEqualTo(Result.COMPLETED);
            assertThat(outcome.token()).isGreaterThan(deadHoldersToken);
            assertThat(outcome.recovered()).isEqualTo(1);
            assertExactlyOnce(gateway.ledger(), merchant, 10);
        }
    }

    /**
     * A 503 says nothing definitive (the refund may exist): after its retries and a lookup, each
     * refund stays sending, the worker stops after three such refunds in a row, and none is failed.
     */
    @Test
    void aGatewayThatKeepsAnswering503LeavesRefundsSendingNeverFailed() throws Exception {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", 6, new BigDecimal("60.00"), "EUR");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).failBefore(1.0).build())) {
            List<SettlementEvent> events = new CopyOnWriteArrayList<>();
            SettlementOutcome outcome = worker(gateway).gatewayAttempts(2).gatewayBackoff(Duration.ofMillis(5)).listener(events::add)
                    .build().settle(merchant);
            assertThat(outcome.result()).isEqualTo(Result.GATEWAY_UNAVAILABLE);
            assertThat(outcome.failed()).isZero();
            assertThat(outcome.left()).isEqualTo(6);
            assertThat(states(merchant)).containsExactly(Map.entry("pending", 3L), Map.entry("sending", 3L));
            assertThat(events).extracting(SettlementEvent::type).contains(SettlementEvent.Type.GATEWAY_DOWN)
                    .doesNotContain(SettlementEvent.Type.FAILED);
            assertThat(gateway.ledger()).isEmpty();
        }
    }

    @Test
    void aTimeoutAfterTheGatewayCreatedTheRefundIsConfirmedNotFailedAndNotDuplicated() throws Exception {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", 3, new BigDecimal("30.00"), "EUR");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).failAfter(1.0).build())) {
            SettlementOutcome outcome = worker(gateway).gatewayAttempts(3).build().settle(merchant);
            assertThat(outcome.result()).isEqualTo(Result.COMPLETED);
            assertThat(outcome.sent()).isEqualTo(3);
            assertThat(outcome.failed()).isZero();
            assertExactlyOnce(gateway.ledger(), merchant, 3);
        }
    }

    /**
     * Four in flight, no renewal, and a lease that expires long before the run could end: the
     * worker stops claiming when it finds the lease gone, having left at most three times its
     * concurrency rows claimed but unconfirmed (claimed ahead, in flight, waiting for their
     * confirm). The next holder looks each of them up and finishes the run; nothing is sent twice.
     */
    @Test
    void aLostLeaseLeavesABoundedNumberOfClaimedRowsAndTheNextHolderFinishesThem() throws Exception {
        String merchant = freshMerchant();
        int concurrency = 4;
        RefundSeeder.seed(db, merchant, merchant + "_r", 100, new BigDecimal("1000.00"), "EUR");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(20)).build())) {
            // 100 refunds at 20 ms, four at a time, take at least 500 ms; the lease lasts 200.
            SettlementOutcome stopped = worker(gateway).concurrency(concurrency).ttl(Duration.ofMillis(200))
                    .variant(new WorkerVariant(RefundWrites.fenced(), false, true)).build().settle(merchant);
            assertThat(stopped.result()).isEqualTo(Result.LEASE_LOST);
            Map<String, Long> left = states(merchant);
            assertThat(left.getOrDefault("sending", 0L)).as("claimed but unconfirmed").isLessThanOrEqualTo(3L * concurrency);
            assertThat(left.getOrDefault("pending", 0L)).as("rows never claimed").isPositive();

            SettlementOutcome next = worker(gateway).concurrency(concurrency).build().settle(merchant);
            assertThat(next.result()).isEqualTo(Result.COMPLETED);
            assertThat(stopped.sent() + next.sent()).isEqualTo(100);
            assertExactlyOnce(gateway.ledger(), merchant, 100);
        }
    }

    static void assertExactlyOnce(List<GatewayRefund> ledger, String merchant, int expected) throws Exception {
        List<GatewayRefund> mine = ledger.stream().filter(r -> r.merchant().equals(merchant)).toList();
        assertThat(mine).hasSize(expected);
        assertThat(mine.stream().map(GatewayRefund::reference).distinct().count()).isEqualTo(expected);
        Map<String, BigDecimal> amounts = amounts(merchant);
        for (GatewayRefund refund : mine) {
            assertThat(refund.amount()).as(refund.reference()).isEqualByComparingTo(amounts.get(refund.reference()));
        }
    }

    private static Map<String, BigDecimal> amounts(String merchant) throws Exception {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("SELECT id, amount FROM refund WHERE merchant = ?")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                Map<String, BigDecimal> out = new java.util.HashMap<>();
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getBigDecimal(2));
                }
                return out;
            }
        }
    }

    private static String key(String id) throws Exception {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("SELECT idempotency_key FROM refund WHERE id = ?")) {
            s.setString(1, id);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private static Map<String, Long> states(String merchant) throws Exception {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("SELECT state FROM refund WHERE merchant = ?")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                List<String> states = new java.util.ArrayList<>();
                while (rs.next()) {
                    states.add(rs.getString(1));
                }
                return states.stream().collect(Collectors.groupingBy(x -> x, java.util.TreeMap::new, Collectors.counting()));
            }
        }
    }
}
