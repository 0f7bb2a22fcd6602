package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.Lease;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.provider.RefundGateway;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.Reconciliation.Kind;
import dev.fenced.settlement.SettlementOutcome.Result;
import dev.fenced.testing.servers.OwnDatabase;
import dev.fenced.testing.SettableClock;
import dev.fenced.testing.servers.TestRedis;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Ordinary payment failures against a real gateway over HTTP, a real Redis and a real database:
 * an outage, answers lost after the gateway made the refund, keys reused across deployments,
 * concurrent seeds, an older holder finishing a row mid-takeover, and reconciliation. Each test
 * has a control run that shows its assertions can fail. One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class MoneyFailureContract {
    private HikariDataSource db;
    private RedisLeaseStore leases;

    /** A JDBC URL of the database under test. */
    protected abstract String jdbcUrl();

    @BeforeAll
    void start() {
        db = pool(jdbcUrl());
        RefundSchema.migrate(db);
        leases = RedisLeaseStore.builder(TestRedis.uri())
                .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf)))
                .build();
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
        config.setMaximumPoolSize(12);
        return new HikariDataSource(config);
    }

    private static String freshMerchant() {
        return "m_" + UUID.randomUUID().toString().substring(0, 8);
    }

    private String seed(int refunds, String total) {
        String merchant = freshMerchant();
        RefundSeeder.seed(db, merchant, merchant + "_r", refunds, new BigDecimal(total), "EUR");
        return merchant;
    }

    private SettlementWorker.Builder worker(String gatewayUrl, Duration timeout) {
        return SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(GatewayClient.of(gatewayUrl, timeout))
                .ttl(Duration.ofSeconds(10)).gatewayBackoff(Duration.ofMillis(10));
    }

    private SettlementWorker.Builder worker(PaymentGateway gateway) {
        return worker(gateway.url(), Duration.ofSeconds(5));
    }

    /**
     * The gateway refuses connections for the whole run: the worker stops after its failure limit,
     * releases its lease and marks nothing failed; the refunds it tried go back to pending. The
     * next run, with the gateway back, pays each refund once. Control: a gateway that definitively
     * refuses every refund makes the same assertions see failed rows.
     */
    @ParameterizedTest(name = "definitive refusal instead of an outage: {0}")
    @ValueSource(booleans = {false, true})
    void anOutageForAWholeRunFailsNothingAndTheNextRunPaysEachRefundOnce(boolean control) throws Exception {
        String merchant = seed(20, "200.00");
        GatewayConfig.Builder config = GatewayConfig.builder().latency(Duration.ZERO);
        if (control) {
            config.refuseAbove(new BigDecimal("0.01"));
        }
        try (PaymentGateway gateway = PaymentGateway.start(config.build())) {
            if (!control) {
                gateway.outage(Duration.ofSeconds(30));
            }
            SettlementOutcome outage = worker(gateway).concurrency(4).build().settle(merchant);
            if (control) {
                assertThat(outage.result()).isEqualTo(Result.REJECTED);
                assertThat(states(merchant)).as("control: definitive refusals are marked failed").containsExactly(Map.entry("failed", 20L));
                assertThat(reasons(merchant)).allMatch(reason -> reason.contains("exceeds") && !reason.contains("127.0.0.1"));
                return;
            }
            assertThat(outage.result()).isEqualTo(Result.GATEWAY_UNAVAILABLE);
            assertThat(outage.failed()).isZero();
            assertThat(outage.left()).isEqualTo(20);
            assertThat(states(merchant)).as("an outage never parks a refund as failed").containsOnlyKeys("pending");
            assertThat(leases.inspect(Merchants.resource(merchant)).holder()).as("lease released").isNull();

            gateway.outage(Duration.ZERO);
            awaitListening(gateway);
            SettlementOutcome next = worker(gateway).concurrency(4).build().settle(merchant);
            assertThat(next.result()).isEqualTo(Result.COMPLETED);
            assertPaidOnce(gateway.ledger(), merchant, 20);
        }
    }

    /**
     * The gateway makes each refund but its answers (and the lookups after them) arrive after the
     * client's timeout: the rows stay sending, the run reports the gateway unavailable, and the next
     * run finds every refund under its key and confirms it without sending it again. Control: a
     * gateway that ignores idempotency keys turns the same retries into duplicates.
     */
    @ParameterizedTest(name = "gateway ignores keys: {0}")
    @ValueSource(booleans = {false, true})
    void answersLostAfterTheGatewayPaidStaySendingAndTheNextRunFindsThemByKey(boolean control) throws Exception {
        String merchant = seed(3, "30.00");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(400))
                .idempotency(!control).build())) {
            SettlementOutcome lost = worker(gateway.url(), Duration.ofMillis(150)).gatewayAttempts(2).gatewayFailureLimit(10).build()
                    .settle(merchant);
            assertThat(lost.result()).isEqualTo(Result.GATEWAY_UNAVAILABLE);
            assertThat(states(merchant)).as("in doubt: still sending").containsExactly(Map.entry("sending", 3L));
            // each request takes the gateway 400 ms, after the client gave up at 150: it pays them all, later
            await("the gateway answering the requests the client gave up on").atMost(Duration.ofSeconds(30))
                    .until(() -> gateway.requestsInFlight() == 0);
            SettlementOutcome next = worker(gateway).build().settle(merchant);
            if (control) {
                assertThat(refundsOf(gateway.ledger(), merchant)).as("control: retries without idempotency pay twice").hasSizeGreaterThan(3);
                return;
            }
            assertThat(next.result()).isEqualTo(Result.COMPLETED);
            assertThat(next.recovered()).isEqualTo(3);
            assertPaidOnce(gateway.ledger(), merchant, 3);
        }
    }

    /** Longer than any provider keeps a key: the worker as it was before it knew keys expire. */
    private static final Duration KEYS_KEPT_FOREVER = Duration.ofDays(36_500);

    /**
     * A provider keeps a key 24 hours (Stripe does). The gateway makes each refund but its answers
     * are lost, so the rows stay sending; then a day passes, on the gateway's clock (moved, not
     * waited for) and in the rows' first-attempt times (moved back by as much): the key is
     * forgotten, and a lookup by it finds nothing. The next run knows the rows' keys are past the
     * retention, finds each refund by reference and confirms it, sending nothing. Control: a worker
     * that believes keys are kept forever trusts the empty lookup and sends again under the same
     * key, which the provider now takes for a new request: every refund is paid twice.
     */
    @ParameterizedTest(name = "worker trusts keys forever: {0}")
    @ValueSource(booleans = {false, true})
    void aRowWhoseKeyTheProviderForgotIsFoundByReferenceAndNeverSentAgain(boolean control) throws Exception {
        String merchant = seed(3, "30.00");
        SettableClock gatewayClock = new SettableClock(Instant.now());
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(300)).clock(gatewayClock).build())) {
            SettlementOutcome lost = worker(gateway.url(), Duration.ofMillis(100)).gatewayAttempts(1).gatewayFailureLimit(10).build()
                    .settle(merchant);
            assertThat(lost.result()).isEqualTo(Result.GATEWAY_UNAVAILABLE);
            assertThat(states(merchant)).as("in doubt: still sending").containsExactly(Map.entry("sending", 3L));
            await("the gateway answering the requests the client gave up on").atMost(Duration.ofSeconds(30))
                    .until(() -> gateway.requestsInFlight() == 0);
            assertThat(refundsOf(gateway.ledger(), merchant)).as("each refund made once, its answer lost").hasSize(3);

            ageFirstAttempts(merchant, Duration.ofHours(25));
            gatewayClock.advance(Duration.ofHours(25));
            GatewayClient client = GatewayClient.of(gateway.url(), Duration.ofSeconds(5));
            keys(merchant).values().forEach(key -> assertThat(client.findByKey(key)).as("the provider forgot " + key).isEmpty());

            SettlementOutcome next = worker(gateway).keyRetention(control ? KEYS_KEPT_FOREVER : Duration.ofHours(24), Duration.ofHours(1))
                    .build().settle(merchant);
            assertThat(next.result()).isEqualTo(Result.COMPLETED);
            if (control) {
                assertThat(refundsOf(gateway.ledger(), merchant)).as("control: a blind resend after the key expired pays twice")
                        .hasSize(6);
                return;
            }
            assertThat(next.recovered()).isEqualTo(3);
            assertPaidOnce(gateway.ledger(), merchant, 3);
        }
    }

    /**
     * The gateway refuses connections for a whole run (nothing made), and the rows go back to
     * pending; 23.5 hours later the provider still knows their keys, but a send could outlast them
     * (inside the 1 h margin). A pending row is no proof
     * that nothing reached the provider (a proxy may have forwarded a request and then failed), so the next run looks
     * each one up by reference, finds nothing, and leaves it in sending for an operator, sending
     * nothing, and the run does not report success. Control: a worker that trusts keys forever
     * sends them all.
     */
    @ParameterizedTest(name = "worker trusts keys forever: {0}")
    @ValueSource(booleans = {false, true})
    void aRowTriedLongerAgoThanTheKeyRetentionIsNeverSentBlind(boolean control) throws Exception {
        String merchant = seed(2, "20.00");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            gateway.outage(Duration.ofSeconds(30));
            SettlementOutcome down = worker(gateway).gatewayAttempts(1).gatewayFailureLimit(10).build().settle(merchant);
            assertThat(down.result()).isEqualTo(Result.GATEWAY_UNAVAILABLE);
            assertThat(states(merchant)).as("nothing reached the gateway: back to pending").containsExactly(Map.entry("pending", 2L));
            assertThat(byId(merchant, "first_attempt_at", Timestamp.class).values()).as("each claim stamped its first attempt")
                    .hasSize(2).doesNotContainNull();
            ageFirstAttempts(merchant, Duration.ofMinutes(23 * 60 + 30));
            gateway.outage(Duration.ZERO);
            awaitListening(gateway);

            List<SettlementEvent> events = new CopyOnWriteArrayList<>();
            SettlementOutcome next = worker(gateway).keyRetention(control ? KEYS_KEPT_FOREVER : Duration.ofHours(24), Duration.ofHours(1))
                    .listener(events::add).build().settle(merchant);
            if (control) {
                assertThat(next.result()).isEqualTo(Result.COMPLETED);
                assertThat(refundsOf(gateway.ledger(), merchant)).as("control: sent without a look").hasSize(2);
                return;
            }
            assertThat(next.result()).as("work left undone is not success").isEqualTo(Result.FAILED);
            assertThat(next.error()).contains("2 refunds need an operator").contains("past the provider's key retention");
            assertThat(refundsOf(gateway.ledger(), merchant)).as("nothing sent").isEmpty();
            assertThat(states(merchant)).containsExactly(Map.entry("sending", 2L));
            assertThat(events).filteredOn(e -> e.type() == SettlementEvent.Type.CHECKED).extracting(SettlementEvent::detail)
                    .containsOnly("by reference: absent").hasSize(2);
        }
    }

    /**
     * Rows the worker left in sending for an operator (first tried 26 h ago, no refund anywhere)
     * are told apart by reconcile ({@code key-expired-unpaid}, not {@code stuck-in-sending}) and
     * repaired with {@code --resend-expired}: a new key, back to pending; the next settle pays each
     * once under its new key. A row first tried 23.5 h ago is past the worker's window but not yet
     * past the retention plus the margin (a request under its key could still be on its way): it is
     * reported, keeps its key and is not sent. Control: the repair without the flag leaves all
     * three, and the next settle sends nothing.
     */
    @ParameterizedTest(name = "repair without --resend-expired: {0}")
    @ValueSource(booleans = {false, true})
    void rowsPastTheKeyRetentionAreResentUnderANewKeyOnlyByTheOperatorsRepair(boolean control) throws Exception {
        String merchant = seed(3, "30.00");
        String recent = merchant + "_r003"; // RefundSeeder: prefix and a three-digit index
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            gateway.outage(Duration.ofSeconds(30));
            worker(gateway).gatewayAttempts(1).gatewayFailureLimit(10).build().settle(merchant);
            ageFirstAttempts(merchant, Duration.ofHours(26));
            gateway.outage(Duration.ZERO);
            awaitListening(gateway);
            assertThat(worker(gateway).build().settle(merchant).result()).isEqualTo(Result.FAILED);
            assertThat(states(merchant)).as("left for an operator").containsExactly(Map.entry("sending", 3L));
            Timestamp first = column(recent, "first_attempt_at", Timestamp.class);
            execute("UPDATE refund SET first_attempt_at = ? WHERE id = ?",
                    new Timestamp(first.getTime() + Duration.ofMinutes(150).toMillis()), recent); // 23.5 h ago
            Map<String, String> keysBefore = keys(merchant);

            Reconciliation reconciliation = Reconciliation.of(db, GatewayClient.of(gateway.url(), Duration.ofSeconds(5)));
            assertThat(reconciliation.check(merchant).discrepancies()).extracting(Reconciliation.Discrepancy::kind)
                    .containsOnly(Kind.KEY_EXPIRED_UNPAID).hasSize(3);
            Reconciliation.Report repaired = reconciliation.repair(merchant, leases, Duration.ofSeconds(10), false, !control);
            SettlementOutcome next = worker(gateway).build().settle(merchant);
            assertThat(next.result()).as("a row left for an operator fails the run").isEqualTo(Result.FAILED);
            if (control) {
                assertThat(repaired.unresolved()).hasSize(3);
                assertThat(refundsOf(gateway.ledger(), merchant)).as("control: nothing sent").isEmpty();
                return;
            }
            assertThat(repaired.unresolved()).extracting(Reconciliation.Discrepancy::refundId).containsExactly(recent);
            Map<String, String> keysAfter = keys(merchant);
            assertThat(keysAfter.get(recent)).as("not yet past the retention plus the margin: the key stays").isEqualTo(keysBefore.get(recent));
            List<GatewayRefund> paid = refundsOf(gateway.ledger(), merchant);
            assertThat(paid).extracting(GatewayRefund::reference).containsExactlyInAnyOrder(merchant + "_r001", merchant + "_r002");
            for (GatewayRefund refund : paid) {
                assertThat(refund.idempotencyKey()).as(refund.reference() + " under its new key")
                        .isEqualTo(keysAfter.get(refund.reference())).isNotEqualTo(keysBefore.get(refund.reference()));
            }
            assertThat(stateById(merchant)).containsEntry(recent, "sending").containsEntry(merchant + "_r001", "sent");
        }
    }

    /**
     * A refund refused a day ago (nothing made) that an operator retries with
     * {@code reconcile --repair --retry-failed}: the retry forgets its first attempt, so the next
     * settle sends it, once. Control: the same row put back to pending by hand, its first attempt
     * kept, is held back as a key in doubt and sent to no one.
     */
    @ParameterizedTest(name = "put back by hand: {0}")
    @ValueSource(booleans = {false, true})
    void aRefusalRetriedByReconcileADayLaterIsSentOnce(boolean control) throws Exception {
        String merchant = seed(1, "70.25");
        String id = merchant + "_r001"; // RefundSeeder: prefix and a three-digit index
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO)
                .refuseAbove(new BigDecimal("50.00")).build())) {
            assertThat(worker(gateway).build().settle(merchant).result()).isEqualTo(Result.REJECTED);
            assertThat(stateById(merchant)).containsEntry(id, "failed");
            ageFirstAttempts(merchant, Duration.ofHours(25));
        }
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            if (control) {
                execute("UPDATE refund SET state = 'pending' WHERE id = ?", id);
            } else {
                Reconciliation.Report retried = Reconciliation.of(db, GatewayClient.of(gateway.url(), Duration.ofSeconds(5)))
                        .repair(merchant, leases, Duration.ofSeconds(10), true);
                assertThat(retried.retried()).containsExactly(id);
                assertThat(column(id, "first_attempt_at", Timestamp.class)).as("the retry forgets the first attempt").isNull();
            }
            SettlementOutcome next = worker(gateway).build().settle(merchant);
            if (control) {
                assertThat(next.result()).as("control: a first attempt kept holds the row back").isEqualTo(Result.FAILED);
                assertThat(refundsOf(gateway.ledger(), merchant)).isEmpty();
                return;
            }
            assertThat(next.result()).isEqualTo(Result.COMPLETED);
            assertPaidOnce(gateway.ledger(), merchant, 1);
        }
    }

    /**
     * A provider accepts refunds as pending and settles them later, some failing after acceptance.
     * A poll before the final word changes nothing; after it, each sent row becomes settled, or
     * returned with the provider's reason, exactly as the provider reports it; a second poll finds
     * nothing to do. Later news that contradicts a final state (the gateway restarted with every
     * refund succeeded) never moves a row back: returned stays returned. Control: a row still in
     * sent when that news comes is settled by it, so the assertion sees a change when one is allowed.
     */
    @Test
    void thePollMovesSentRowsForwardAsTheProviderReportsAndNeverBack(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        String merchant = seed(12, "120.00");
        SettableClock gatewayClock = new SettableClock(Instant.now());
        java.nio.file.Path ledger = dir.resolve("ledger.jsonl");
        GatewayConfig lifecycle = GatewayConfig.builder().latency(Duration.ZERO).clock(gatewayClock).ledgerFile(ledger).seed(11)
                .lifecycle(Duration.ofHours(2), 0.25).build();
        String held;
        try (PaymentGateway gateway = PaymentGateway.start(lifecycle)) {
            GatewayClient client = GatewayClient.of(gateway.url(), Duration.ofSeconds(5));
            assertThat(worker(gateway).build().settle(merchant).result()).isEqualTo(Result.COMPLETED);
            RefundLifecycle polls = RefundLifecycle.of(db, client);
            RefundLifecycle.Report early = polls.poll(merchant, Duration.ZERO);
            assertThat(early.stillPending()).isEqualTo(12);
            assertThat(early.settled()).isEmpty();
            assertThat(polls.poll(merchant, Duration.ofHours(1)).checked()).as("nothing sent an hour ago").isZero();

            gatewayClock.advance(Duration.ofHours(2));
            Map<String, String> statusByReference = new TreeMap<>();
            refundsOf(gateway.ledger(), merchant).forEach(r -> statusByReference.put(r.reference(), r.status()));
            assertThat(statusByReference.values()).contains(GatewayRefund.SUCCEEDED, GatewayRefund.FAILED);
            held = statusByReference.entrySet().stream().filter(e -> e.getValue().equals(GatewayRefund.SUCCEEDED))
                    .map(Map.Entry::getKey).findFirst().orElseThrow();
            execute("UPDATE refund SET state = 'settled' WHERE id = ?", held); // set aside: the control below
            RefundLifecycle.Report done = polls.poll(merchant, Duration.ZERO);
            assertThat(done.settled().size() + done.returned().size()).isEqualTo(11);
            Map<String, String> states = stateById(merchant);
            statusByReference.forEach((id, status) -> assertThat(states.get(id)).as(id)
                    .isEqualTo(status.equals(GatewayRefund.SUCCEEDED) ? "settled" : "returned"));
            assertThat(byId(merchant, "failure_reason", String.class).values()).filteredOn(java.util.Objects::nonNull).isNotEmpty()
                    .allMatch(reason -> reason.equals("the provider reports the refund failed: expired_or_canceled_card"));
            assertThat(polls.poll(merchant, Duration.ZERO).checked()).as("nothing left in sent").isZero();
            assertThat(Reconciliation.of(db, client).check(merchant).discrepancies()).as("returned refunds need a person")
                    .extracting(Reconciliation.Discrepancy::refundId).containsExactlyInAnyOrderElementsOf(done.returned());
            execute("UPDATE refund SET state = 'sent' WHERE id = ?", held);
        }
        try (PaymentGateway allSucceeded = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).ledgerFile(ledger).build())) {
            Map<String, String> before = stateById(merchant);
            RefundLifecycle.Report late = RefundLifecycle.of(db, GatewayClient.of(allSucceeded.url(), Duration.ofSeconds(5)))
                    .poll(merchant, Duration.ZERO);
            assertThat(late.settled()).as("control: the row still sent is settled").containsExactly(held);
            Map<String, String> after = stateById(merchant);
            before.forEach((id, state) -> {
                if (!id.equals(held)) {
                    assertThat(after.get(id)).as(id + " never moves back").isEqualTo(state);
                }
            });
            assertThat(after.values()).contains("returned");
        }
    }

    /** Moves each row's first attempt {@code by} into the past, as if that much time had gone by on the database's clock. */
    private void ageFirstAttempts(String merchant, Duration by) throws SQLException {
        for (Map.Entry<String, Timestamp> row : byId(merchant, "first_attempt_at", Timestamp.class).entrySet()) {
            execute("UPDATE refund SET first_attempt_at = ? WHERE id = ?", new Timestamp(row.getValue().getTime() - by.toMillis()), row.getKey());
        }
    }

    /**
     * Two deployments, each with its own database, seed the same refund ids for two merchants and
     * share one gateway: each merchant is paid its own amounts, because each row carries its own
     * key. Control: keys equal to the refund ids, as before keys were kept on the row: the second
     * deployment's refunds collide with the first's at the gateway and are not paid, and the worker
     * reports them as refused rather than confirming the first merchant's refunds.
     */
    @ParameterizedTest(name = "keys are the refund ids: {0}")
    @ValueSource(booleans = {false, true})
    void twoDeploymentsWithTheSameRefundIdsEachPayTheirOwnAmounts(boolean control) throws Exception {
        String first = freshMerchant();
        String second = freshMerchant();
        String ids = "d_" + UUID.randomUUID().toString().substring(0, 6) + "_";
        try (OwnDatabase otherDeployment = OwnDatabase.on(jdbcUrl()); HikariDataSource otherDb = pool(otherDeployment.url());
             RedisLeaseStore otherLeases = RedisLeaseStore.builder(TestRedis.uri()).build();
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            RefundSchema.migrate(otherDb);
            RefundSeeder.seed(db, first, ids, 5, new BigDecimal("50.00"), "EUR");
            RefundSeeder.seed(otherDb, second, ids, 5, new BigDecimal("75.00"), "EUR");
            if (control) {
                for (HikariDataSource each : List.of(db, otherDb)) {
                    try (Connection c = each.getConnection(); PreparedStatement s = c.prepareStatement(
                            "UPDATE refund SET idempotency_key = id WHERE id LIKE ?")) {
                        s.setString(1, ids + "%");
                        s.executeUpdate();
                    }
                }
            }
            SettlementOutcome a = worker(gateway).build().settle(first);
            SettlementOutcome b = SettlementWorker.builder().leaseStore(otherLeases).dataSource(otherDb)
                    .gateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(5))).gatewayBackoff(Duration.ofMillis(10)).build()
                    .settle(second);
            assertThat(a.result()).isEqualTo(Result.COMPLETED);
            List<GatewayRefund> secondPaid = refundsOf(gateway.ledger(), second);
            if (control) {
                assertThat(b.result()).as("control: the reused keys collide").isEqualTo(Result.REJECTED);
                assertThat(secondPaid).as("control: the second merchant is not paid").isEmpty();
                return;
            }
            assertThat(b.result()).isEqualTo(Result.COMPLETED);
            assertPaidOnce(gateway.ledger(), first, 5);
            assertThat(secondPaid).hasSize(5);
            assertThat(sum(secondPaid)).isEqualByComparingTo("75.00");
            assertThat(sum(refundsOf(gateway.ledger(), first))).isEqualByComparingTo("50.00");
        }
    }

    /**
     * Holder A took the lease, claimed r_3 inside its transaction and stalled there (its row locked,
     * its lease left to expire); B, on a pool whose sessions bound their lock waits to 1 s, takes
     * the lease, settles r_1 and r_2, and its claim of r_3 gives up after the bound: DATABASE_WAIT,
     * the wait named in one line, its lease released, r_3 and the rest untouched by it. Control: B
     * on a pool without the bound is still waiting after three times the bound, and finishes once A
     * rolls back.
     */
    @ParameterizedTest(name = "lock wait bounded: {0}")
    @ValueSource(booleans = {true, false})
    void aClaimBehindAHolderStalledInItsClaimTransactionGivesUpAfterTheLockWait(boolean bounded) throws Exception {
        String merchant = seed(6, "60.00");
        String r3 = RefundSeeder.refundId(merchant + "_r", 3);
        long bound = 1_000; // MariaDB counts whole seconds
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setMaximumPoolSize(4);
        if (bounded) {
            try (Connection c = db.getConnection()) {
                config.setConnectionInitSql(dev.fenced.jdbc.JdbcDialect.detect(c).boundWaits(Duration.ofMillis(bound), Duration.ZERO)
                        .orElseThrow());
            }
        }
        ExecutorService runner = Executors.newSingleThreadExecutor();
        try (HikariDataSource pool = new HikariDataSource(config); Connection stalled = db.getConnection();
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            Lease a = leases.tryAcquire(Merchants.resource(merchant), Duration.ofMillis(300)).orElseThrow();
            stalled.setAutoCommit(false);
            FencedRows.of(RefundSchema.table()).claim(stalled, r3, a.token());
            await("A's lease, which a stalled holder cannot renew, expired").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                    .until(() -> leases.inspect(Merchants.resource(merchant)).holder() == null);
            SettlementWorker b = SettlementWorker.builder().leaseStore(leases).dataSource(pool)
                    .gateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(5))).ttl(Duration.ofSeconds(10)).build();
            long start = System.nanoTime();
            Future<SettlementOutcome> run = runner.submit(() -> b.settle(merchant));
            if (!bounded) {
                assertThatThrownBy(() -> run.get(3 * bound, TimeUnit.MILLISECONDS)).as("control: still waiting after three times the bound")
                        .isInstanceOf(TimeoutException.class);
                stalled.rollback();
                assertThat(run.get(30, TimeUnit.SECONDS).result()).isEqualTo(Result.COMPLETED);
                assertPaidOnce(gateway.ledger(), merchant, 6);
                return;
            }
            SettlementOutcome outcome = run.get(3 * bound, TimeUnit.MILLISECONDS);
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(outcome.result()).isEqualTo(Result.DATABASE_WAIT);
            assertThat(outcome.error()).startsWith("claim of " + r3 + " waited ").endsWith(" s for a row lock held by another session; gave up");
            assertThat(took).as("ended within three times the bound").isLessThan(3 * bound);
            assertThat(outcome.sent()).isEqualTo(2);
            assertThat(outcome.left()).isEqualTo(4);
            assertThat(leases.inspect(Merchants.resource(merchant)).holder()).as("lease released").isNull();
            Map<String, String> byState = stateById(merchant);
            assertThat(byState.values().stream().filter("sent"::equals).count()).isEqualTo(2);
            assertThat(byState.values().stream().filter("pending"::equals).count()).as("nothing else written, nothing parked").isEqualTo(4);
            stalled.rollback();
            SettlementOutcome next = worker(gateway).build().settle(merchant);
            assertThat(next.result()).isEqualTo(Result.COMPLETED);
            assertPaidOnce(gateway.ledger(), merchant, 6);
        } finally {
            runner.shutdownNow();
        }
    }

    /** A JDBC URL for database {@code name} on the same server, created when missing. */
    private String database(String name) throws SQLException {
        try (Connection c = db.getConnection(); java.sql.Statement s = c.createStatement()) {
            if (isPostgres(c)) {
                try (ResultSet rs = s.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + name + "'")) {
                    if (!rs.next()) {
                        s.execute("CREATE DATABASE " + name);
                    }
                }
            } else {
                s.execute("CREATE DATABASE IF NOT EXISTS " + name);
            }
        }
        return jdbcUrl().replaceFirst("^(jdbc:[a-z]+://[^/?]+/)[^?]*", "$1" + name);
    }

    private static boolean isPostgres(Connection c) throws SQLException {
        return c.getMetaData().getDatabaseProductName().toLowerCase(java.util.Locale.ROOT).contains("postgres");
    }

    /**
     * An upgrade over a worker that stopped mid-call: before keys were kept on the row, the key was
     * the refund id. The migration gives rows that exist already their id as their key, so the next
     * worker finds the refund the old version made and does not pay it again. Control: the same row
     * given a fresh key, as a migration that filled the column with new keys would, is paid twice.
     */
    @ParameterizedTest(name = "fresh key for an existing row: {0}")
    @ValueSource(booleans = {false, true})
    void anUpgradeKeepsTheKeyARowInFlightWasSentWith(boolean control) throws Exception {
        String url = database("fenced_upgrade");
        try (HikariDataSource old = pool(url)) {
            String dialect;
            try (Connection c = old.getConnection(); java.sql.Statement s = c.createStatement()) {
                dialect = isPostgres(c) ? "postgresql" : "mariadb";
            }
            deployLastRelease(old, dialect, "2"); // the release before keys were kept on the row
            String merchant = freshMerchant();
            String id = merchant + "_r001"; // RefundSeeder: prefix and a three-digit index
            try (Connection c = old.getConnection(); PreparedStatement s = c.prepareStatement(
                    "INSERT INTO refund (id, merchant, seq, amount, currency, state, fence) VALUES (?, ?, 1, 70.25, 'EUR', 'sending', 1)")) {
                s.setString(1, id);
                s.setString(2, merchant);
                s.executeUpdate();
            }
            try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build());
                 RedisLeaseStore upgradedLeases = RedisLeaseStore.builder(TestRedis.uri())
                         .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(old, RefundSchema.table(), Merchants::merchantOf))).build()) {
                // The old version called the gateway under the refund id, then stopped before its confirm.
                GatewayClient.of(gateway.url(), Duration.ofSeconds(5)).createRefund(id, id, merchant, new BigDecimal("70.25"), "EUR");
                RefundSchema.migrate(old);
                if (control) {
                    try (Connection c = old.getConnection(); PreparedStatement s = c.prepareStatement(
                            "UPDATE refund SET idempotency_key = ? WHERE id = ?")) {
                        s.setString(1, UUID.randomUUID().toString());
                        s.setString(2, id);
                        s.executeUpdate();
                    }
                }
                SettlementOutcome outcome = SettlementWorker.builder().leaseStore(upgradedLeases).dataSource(old)
                        .gateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(5))).build().settle(merchant);
                assertThat(outcome.result()).isEqualTo(Result.COMPLETED);
                assertThat(refundsOf(gateway.ledger(), merchant)).as(control ? "control: paid twice" : "paid once")
                        .hasSize(control ? 2 : 1);
            }
        }
    }

    /**
     * Two deployments upgraded from the release before keys were kept on the row share one gateway.
     * Each has a row left in sending by a call that never reached the gateway, with the same id,
     * merchant and amount, so both keep the key V2 gave them: the refund id. The first deployment
     * pays its row; the second finds that refund under its row's key, sees that it names the first
     * deployment as its owner, and marks its row failed rather than sent; reconcile reports the
     * foreign refund on the second deployment, and a repair leaves it to a person. Control: the
     * first deployment's refund made without an owner, as every refund was before: the second
     * deployment's row is confirmed on it, one refund for two rows, and reconcile sees nothing.
     */
    @ParameterizedTest(name = "refunds without an owner: {0}")
    @ValueSource(booleans = {false, true})
    void upgradedRowsOfTwoDeploymentsAreNeverBothSentOnOneRefund(boolean control) throws Exception {
        String merchant = freshMerchant();
        String id = merchant + "_r001"; // RefundSeeder: prefix and a three-digit index
        try (Scratch first = upgraded(merchant, Map.of(id, "sending")); Scratch second = upgraded(merchant, Map.of(id, "sending"));
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            assertThat(first.column(id, "idempotency_key")).as("V2's key for an existing row").isEqualTo(id)
                    .isEqualTo(second.column(id, "idempotency_key"));
            GatewayClient client = GatewayClient.of(gateway.url(), Duration.ofSeconds(5));
            SettlementOutcome a = first.settle(merchant, control ? withoutOwners(client) : client);
            SettlementOutcome b = second.settle(merchant, client);
            assertThat(a.result()).isEqualTo(Result.COMPLETED);
            List<GatewayRefund> paid = refundsOf(gateway.ledger(), merchant);
            assertThat(paid).as("the second deployment's row never made its own refund").hasSize(1);
            Reconciliation.Report secondCheck = Reconciliation.of(second.db, client).check(merchant);
            if (control) {
                assertThat(b.result()).isEqualTo(Result.COMPLETED);
                assertThat(second.column(id, "state")).as("control: sent on the other deployment's refund").isEqualTo("sent");
                assertThat(second.column(id, "gateway_reference")).isEqualTo(first.column(id, "gateway_reference"));
                assertThat(secondCheck.discrepancies()).as("control: reconcile is silent").isEmpty();
                return;
            }
            assertThat(paid.get(0).metadata()).containsEntry("deployment", first.deployment()).containsEntry("refund", id);
            assertThat(first.column(id, "state")).isEqualTo("sent");
            assertThat(b.result()).isEqualTo(Result.REJECTED);
            assertThat(second.column(id, "state")).isEqualTo("failed");
            assertThat(second.column(id, "failure_reason")).contains("belongs to deployment " + first.deployment());
            assertThat(secondCheck.discrepancies()).extracting(Reconciliation.Discrepancy::kind, Reconciliation.Discrepancy::refundId)
                    .containsExactly(tuple(Kind.FOREIGN_REFUND, id));
            assertThat(secondCheck.discrepancies().get(0).detail()).contains(first.deployment(), second.deployment());
            Reconciliation.Report repaired = Reconciliation.of(second.db, client).repair(merchant, second.leases, Duration.ofSeconds(10), true);
            assertThat(repaired.unresolved()).extracting(Reconciliation.Discrepancy::kind).containsExactly(Kind.FOREIGN_REFUND);
            assertThat(repaired.retried()).as("not a failed row without a refund: never sent again under that key").isEmpty();
            assertThat(second.column(id, "state")).isEqualTo("failed");
            assertThat(Reconciliation.of(first.db, client).check(merchant).discrepancies()).as("the first deployment agrees").isEmpty();
        }
    }

    /**
     * Two deployments upgraded from the release before keys were kept on the row share one gateway,
     * each with a pending row of the same id, merchant and amount: the upgrade gives each pending row
     * a random key, so each deployment pays its own row under its own key (two refunds), and
     * reconcile agrees on both (the other deployment's refund of the same merchant is not reported
     * as a refund without a row). Rows in sending, sent or failed keep their refund id as key.
     * Control: the pending rows keep their refund id as key, as V2 left them: the second deployment
     * finds the first's refund under its key and its row is not paid.
     */
    @ParameterizedTest(name = "pending rows keep their refund id as key: {0}")
    @ValueSource(booleans = {false, true})
    void upgradedPendingRowsOfTwoDeploymentsArePaidEachUnderItsOwnKey(boolean control) throws Exception {
        String merchant = freshMerchant();
        String id = merchant + "_r001"; // RefundSeeder: prefix and a three-digit index
        Map<String, String> rows = new java.util.LinkedHashMap<>();
        rows.put(id, "pending");
        for (String state : List.of("sending", "sent", "failed")) {
            rows.put(merchant + "_" + state, state);
        }
        try (Scratch first = upgraded(merchant, rows); Scratch second = upgraded(merchant, Map.of(id, "pending"));
             PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            for (String state : List.of("sending", "sent", "failed")) {
                assertThat(first.column(merchant + "_" + state, "idempotency_key")).as(state + " keeps its key")
                        .isEqualTo(merchant + "_" + state);
            }
            first.execute("DELETE FROM refund WHERE id <> '" + id + "'"); // they served their purpose; only the pending row is settled
            if (control) {
                first.execute("UPDATE refund SET idempotency_key = id");
                second.execute("UPDATE refund SET idempotency_key = id");
            }
            String firstKey = first.column(id, "idempotency_key");
            String secondKey = second.column(id, "idempotency_key");
            GatewayClient client = GatewayClient.of(gateway.url(), Duration.ofSeconds(5));
            SettlementOutcome a = first.settle(merchant, client);
            SettlementOutcome b = second.settle(merchant, client);
            assertThat(a.result()).isEqualTo(Result.COMPLETED);
            List<GatewayRefund> paid = refundsOf(gateway.ledger(), merchant);
            if (control) {
                assertThat(b.result()).as("control: the keys collide").isEqualTo(Result.REJECTED);
                assertThat(paid).as("control: one refund for two rows").hasSize(1);
                assertThat(second.column(id, "state")).isEqualTo("failed");
                return;
            }
            assertThat(firstKey).as("a fresh key, not the refund id").isNotEqualTo(id).isNotEqualTo(secondKey);
            assertThat(secondKey).isNotEqualTo(id);
            assertThat(b.result()).isEqualTo(Result.COMPLETED);
            assertThat(paid).extracting(GatewayRefund::idempotencyKey).containsExactly(firstKey, secondKey);
            assertThat(first.column(id, "state")).isEqualTo("sent");
            assertThat(second.column(id, "state")).isEqualTo("sent");
            assertThat(first.column(id, "gateway_reference")).isEqualTo(paid.get(0).id());
            assertThat(second.column(id, "gateway_reference")).isEqualTo(paid.get(1).id());
            assertThat(Reconciliation.of(first.db, client).check(merchant).discrepancies()).isEmpty();
            assertThat(Reconciliation.of(second.db, client).check(merchant).discrepancies()).isEmpty();
        }
    }

    /** A gateway adapter written before refunds carried their owner: it drops the metadata, as every call did. */
    private static RefundGateway withoutOwners(GatewayClient client) {
        return new RefundGateway() {
            @Override
            public GatewayRefund createRefund(String key, String reference, String merchant, BigDecimal amount, String currency) {
                return client.createRefund(key, reference, merchant, amount, currency);
            }

            @Override
            public Optional<GatewayRefund> findByKey(String key) {
                return client.findByKey(key);
            }

            @Override
            public List<GatewayRefund> refundsOf(String merchant) {
                return client.refundsOf(merchant);
            }
        };
    }

    /**
     * A deployment of its own: a scratch database on the same server, migrated by the release before
     * keys were kept on the row, holding {@code rows} (id to state, 70.25 EUR each), then migrated by
     * this release; dropped on close.
     */
    private Scratch upgraded(String merchant, Map<String, String> rows) throws Exception {
        String name = "fenced_dep_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        HikariDataSource scratch = pool(database(name));
        try {
            String dialect;
            try (Connection c = scratch.getConnection()) {
                dialect = isPostgres(c) ? "postgresql" : "mariadb";
            }
            deployLastRelease(scratch, dialect, "2");
            int seq = 0;
            for (Map.Entry<String, String> row : rows.entrySet()) {
                try (Connection c = scratch.getConnection(); PreparedStatement s = c.prepareStatement(
                        "INSERT INTO refund (id, merchant, seq, amount, currency, state, fence) VALUES (?, ?, ?, 70.25, 'EUR', ?, ?)")) {
                    s.setString(1, row.getKey());
                    s.setString(2, merchant);
                    s.setInt(3, ++seq);
                    s.setString(4, row.getValue());
                    s.setLong(5, row.getValue().equals("pending") ? 0 : 1);
                    s.executeUpdate();
                }
            }
            RefundSchema.migrate(scratch);
        } catch (Exception | Error e) {
            scratch.close();
            dropDatabase(name);
            throw e;
        }
        return new Scratch(name, scratch, RedisLeaseStore.builder(TestRedis.uri())
                .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(scratch, RefundSchema.table(), Merchants::merchantOf))).build());
    }

    private final class Scratch implements AutoCloseable {
        final String name;
        final HikariDataSource db;
        final RedisLeaseStore leases;

        Scratch(String name, HikariDataSource db, RedisLeaseStore leases) {
            this.name = name;
            this.db = db;
            this.leases = leases;
        }

        SettlementOutcome settle(String merchant, RefundGateway gateway) {
            return SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(gateway).ttl(Duration.ofSeconds(10))
                    .gatewayBackoff(Duration.ofMillis(10)).build().settle(merchant);
        }

        String deployment() throws SQLException {
            try (Connection c = db.getConnection()) {
                return RefundOwner.deploymentOf(c);
            }
        }

        void execute(String sql) throws SQLException {
            try (Connection c = db.getConnection(); java.sql.Statement s = c.createStatement()) {
                s.execute(sql);
            }
        }

        String column(String id, String column) throws SQLException {
            try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("SELECT " + column + " FROM refund WHERE id = ?")) {
                s.setString(1, id);
                try (ResultSet rs = s.executeQuery()) {
                    return rs.next() ? rs.getString(1) : null;
                }
            }
        }

        @Override
        public void close() throws SQLException {
            leases.close();
            db.close();
            dropDatabase(name);
        }
    }

    private void dropDatabase(String name) throws SQLException {
        try (Connection c = db.getConnection(); java.sql.Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + name + (isPostgres(c) ? " WITH (FORCE)" : ""));
        }
    }

    /**
     * A database an earlier release migrated: the counter and the refund table under the library's
     * one history (its scripts are kept under test resources as they shipped). The tables it made
     * are dropped first, then rebuilt by the old scripts up to {@code target}.
     */
    private static void deployLastRelease(HikariDataSource db, String dialect, String target) throws Exception {
        try (Connection c = db.getConnection(); java.sql.Statement s = c.createStatement()) {
            for (String table : List.of("refund", "fence_counter", FencedSchema.HISTORY_TABLE, RefundSchema.HISTORY_TABLE)) {
                s.execute("DROP TABLE IF EXISTS " + table);
            }
        }
        org.flywaydb.core.Flyway.configure().dataSource(db).locations("classpath:dev/fenced/settlement/legacy/" + dialect)
                .table(FencedSchema.HISTORY_TABLE).baselineOnMigrate(true).baselineVersion("0").target(target).load().migrate();
    }

    /**
     * The refund table moved from the library's history to the settlement module's own: a database
     * the last release migrated all the way (three migrations under the library's history) migrates
     * again without an error, keeps its rows and their keys, and gets the settlement history.
     */
    @Test
    void aDatabaseTheLastReleaseMigratedMigratesAgainAndKeepsItsRows() throws Exception {
        String url = database("fenced_upgrade");
        try (HikariDataSource old = pool(url)) {
            String dialect;
            try (Connection c = old.getConnection()) {
                dialect = isPostgres(c) ? "postgresql" : "mariadb";
            }
            deployLastRelease(old, dialect, "3");
            RefundSeeder.seed(old, "m_upgrade", "m_upgrade_r", 3, new BigDecimal("30.00"), "EUR");
            Map<String, String> keys = new java.util.TreeMap<>();
            try (Connection c = old.getConnection(); PreparedStatement s = c.prepareStatement("SELECT id, idempotency_key FROM refund")) {
                try (ResultSet rs = s.executeQuery()) {
                    while (rs.next()) {
                        keys.put(rs.getString(1), rs.getString(2));
                    }
                }
            }
            RefundSchema.migrate(old);
            RefundSchema.migrate(old); // every process migrates at start-up: the second finds nothing to do
            Map<String, String> after = new java.util.TreeMap<>();
            try (Connection c = old.getConnection(); PreparedStatement s = c.prepareStatement("SELECT id, idempotency_key FROM refund")) {
                try (ResultSet rs = s.executeQuery()) {
                    while (rs.next()) {
                        after.put(rs.getString(1), rs.getString(2));
                    }
                }
            }
            assertThat(after).hasSize(3).isEqualTo(keys);
            try (Connection c = old.getConnection(); java.sql.Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + RefundSchema.HISTORY_TABLE + " WHERE success")) {
                rs.next();
                assertThat(rs.getInt(1)).as("settlement migrations recorded").isGreaterThanOrEqualTo(2);
            }
        }
    }

    /**
     * Eight seeds of one merchant at once, each with its own id prefix so that only the merchant's
     * uniqueness can stop them: exactly one set of rows. The database refuses a second row for a
     * merchant's sequence number even when the seeder's own check is bypassed.
     */
    @Test
    void concurrentSeedsOfOneMerchantWriteOneSetOfRows() throws Exception {
        String merchant = freshMerchant();
        int seeds = 8;
        CyclicBarrier start = new CyclicBarrier(seeds);
        ExecutorService pool = Executors.newFixedThreadPool(seeds);
        List<Future<Integer>> results = new ArrayList<>();
        try {
            for (int i = 0; i < seeds; i++) {
                String prefix = merchant + "_s" + i + "_";
                Callable<Integer> seedOnce = () -> {
                    start.await();
                    return RefundSeeder.seed(db, merchant, prefix, 300, new BigDecimal("3000.00"), "EUR");
                };
                results.add(pool.submit(seedOnce));
            }
            int succeeded = 0;
            for (Future<Integer> result : results) {
                try {
                    result.get();
                    succeeded++;
                } catch (java.util.concurrent.ExecutionException e) {
                    assertThat(e.getCause()).isInstanceOf(IllegalStateException.class).hasMessageContaining(merchant);
                }
            }
            assertThat(succeeded).isEqualTo(1);
            assertThat(states(merchant)).containsExactly(Map.entry("pending", 300L));
        } finally {
            pool.shutdownNow();
        }
        assertThatThrownBy(() -> execute("INSERT INTO refund (id, merchant, seq, amount, currency) VALUES (?, ?, 1, 1.00, 'EUR')",
                merchant + "_bypass", merchant)).as("the constraint, not the check, refuses the second set").isInstanceOf(SQLException.class);
    }

    /**
     * An older holder confirms a row after the new holder read it as sending: the new holder skips
     * it as finished and completes. Control: the same row confirmed by a newer token is a real
     * violation, and the run stops on it.
     */
    @ParameterizedTest(name = "finished by a newer holder: {0}")
    @ValueSource(booleans = {false, true})
    void aRowTheOlderHolderFinishesMidTakeoverIsSkippedNotAViolation(boolean control) throws Exception {
        String merchant = seed(6, "60.00");
        String row = merchant + "_r003";
        String after = merchant + "_r005";
        FencedRows refunds = FencedRows.of(RefundSchema.table());
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            long olderToken;
            try (Lease older = leases.tryAcquire(Merchants.resource(merchant), Duration.ofSeconds(30)).orElseThrow()) {
                olderToken = older.token();
                refunds.claimAll(db, List.of(row, after), olderToken);
            }
            SettlementOutcome outcome = worker(gateway).phaseHook((phase, id) -> {
                if (phase == SettlementWorker.Phase.AFTER_CLAIM && id.equals(merchant + "_r001")) {
                    long token = control ? leases.inspect(Merchants.resource(merchant)).counter() + 1 : olderToken;
                    if (control) {
                        refunds.claim(db, after, token);
                    }
                    // The older holder (or, in the control, a newer one) records its result for the rows.
                    refunds.confirm(db, control ? after : row, token, Map.of("gateway_reference", "gw_elsewhere"));
                    if (!control) {
                        refunds.confirm(db, after, token, Map.of("gateway_reference", "gw_elsewhere"));
                    }
                }
            }).build().settle(merchant);
            if (control) {
                assertThat(outcome.result()).as("control: a newer holder's row is a violation").isEqualTo(Result.FENCE_VIOLATION);
                return;
            }
            assertThat(outcome.result()).isEqualTo(Result.COMPLETED);
            assertThat(outcome.skipped()).isEqualTo(2);
            assertThat(outcome.sent()).isEqualTo(4);
            assertThat(states(merchant)).containsExactly(Map.entry("sent", 6L));
        }
    }

    /**
     * Two real workers on one gateway that refuses one refund's amount. Worker A, which does not
     * renew (a paused process cannot), claims r003 and stalls before its gateway call; its lease
     * expires and worker B takes the merchant over, reading r003 in sending. While B looks r003 up,
     * A resumes: the gateway refuses the refund and A marks the row failed. B finds it failed, with
     * A's lower fence, when it goes to claim it: the run is REJECTED (exit 7), not COMPLETED, and
     * counts the row apart. Control: a gateway that accepts the amount; A's row ends sent and B
     * completes.
     */
    @ParameterizedTest(name = "the gateway refuses the row: {0}")
    @ValueSource(booleans = {true, false})
    void aRowAnEarlierHolderMarksFailedMidTakeoverIsNotASuccess(boolean refused) throws Exception {
        String merchant = seed(5, "50.00");
        String row = merchant + "_r003";
        execute("UPDATE refund SET amount = 500.00 WHERE id = ?", row);
        GatewayConfig.Builder config = GatewayConfig.builder().latency(Duration.ZERO);
        if (refused) {
            config.refuseAbove(new BigDecimal("100.00"));
        }
        try (PaymentGateway gateway = PaymentGateway.start(config.build())) {
            CountDownLatch stalled = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            AtomicBoolean stopA = new AtomicBoolean();
            SettlementWorker a = worker(gateway).name("A").ttl(Duration.ofMillis(300))
                    .variant(new WorkerVariant(RefundWrites.fenced(), false, false))
                    .phaseHook((phase, id) -> {
                        if (phase == SettlementWorker.Phase.AFTER_CLAIM && id.equals(row)) {
                            stopA.set(true); // A takes nothing after this row
                            stalled.countDown();
                            awaitLatch(resume);
                        }
                    }).build();
            CompletableFuture<SettlementOutcome> older = CompletableFuture.supplyAsync(() -> a.settle(merchant, stopA::get));
            assertThat(stalled.await(30, TimeUnit.SECONDS)).as("A claimed " + row).isTrue();
            await("A's lease expires while it stalls").atMost(Duration.ofSeconds(10))
                    .until(() -> leases.inspect(Merchants.resource(merchant)).holder() == null);

            SettlementOutcome b = worker(gateway).name("B").listener(event -> {
                if (event.type() == SettlementEvent.Type.CHECKED && row.equals(event.refundId())) {
                    resume.countDown();
                    older.orTimeout(30, TimeUnit.SECONDS).join(); // A finishes the row between B's lookup and B's claim
                }
            }).build().settle(merchant);

            assertThat(older.join().sent()).as("A sent the rows before " + row + (refused ? "" : ", and it")).isEqualTo(refused ? 2 : 3);
            assertThat(b.skipped()).as("B found " + row + " finished by A").isEqualTo(1);
            assertThat(b.sent()).isEqualTo(2);
            if (!refused) {
                assertThat(b.result()).as("control: A's row was paid").isEqualTo(Result.COMPLETED);
                assertThat(b.failedElsewhere()).isZero();
                assertThat(states(merchant)).containsExactly(Map.entry("sent", 5L));
                return;
            }
            assertThat(states(merchant)).containsExactly(Map.entry("failed", 1L), Map.entry("sent", 4L));
            assertThat(b.result()).as("a refund A marked failed is not a settled batch").isEqualTo(Result.REJECTED);
            assertThat(b.failedElsewhere()).isEqualTo(1);
            assertThat(b.failed()).as("B itself marked nothing failed").isZero();
        }
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Every discrepancy kind at once, checked then repaired. The check writes nothing (the
     * control for the repair); the repair fixes the safe ones through fenced writes under a fresh
     * token and leaves the rest reported.
     */
    @Test
    void reconcileFindsEachDiscrepancyAndRepairsOnlyTheSafeOnes() throws Exception {
        String merchant = seed(8, "80.00");
        Map<String, String> keys = keys(merchant);
        String r = merchant + "_r00";
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            GatewayClient client = GatewayClient.of(gateway.url(), Duration.ofSeconds(5));
            Map<String, BigDecimal> amounts = amounts(merchant);
            // r001 sent and paid (agrees); r002 sent, never paid; r003 pending, paid; r004 sending, paid;
            // r005 sending, unpaid; r006 failed, paid; r007 failed, unpaid; r008 paid a wrong amount.
            for (int n : new int[] {1, 3, 4, 6}) {
                client.createRefund(keys.get(r + n), r + n, merchant, amounts.get(r + n), "EUR");
            }
            client.createRefund(keys.get(r + 8), r + 8, merchant, amounts.get(r + 8).add(BigDecimal.ONE), "EUR");
            client.createRefund(UUID.randomUUID().toString(), "stray", merchant, BigDecimal.ONE, "EUR");
            setState(r + 1, "sent", 1);
            setState(r + 2, "sent", 1);
            setState(r + 4, "sending", 1);
            setState(r + 5, "sending", 1);
            setState(r + 6, "failed", 1);
            setState(r + 7, "failed", 1);
            Reconciliation reconciliation = Reconciliation.of(db, client);

            Reconciliation.Report check = reconciliation.check(merchant);
            assertThat(kinds(check)).containsExactlyInAnyOrderEntriesOf(Map.of(
                    r + 2, Kind.SENT_WITHOUT_REFUND, r + 3, Kind.REFUND_WITHOUT_SENT, r + 4, Kind.SENDING_BUT_PAID,
                    r + 5, Kind.STUCK_IN_SENDING, r + 6, Kind.FAILED_BUT_PAID, r + 8, Kind.MISMATCH, "stray", Kind.REFUND_WITHOUT_ROW));
            assertThat(check.failed()).containsExactly(r + 7);
            Map<String, String> before = stateById(merchant);

            Reconciliation.Report repaired = reconciliation.repair(merchant, leases, Duration.ofSeconds(10), true);
            Map<String, String> after = stateById(merchant);
            assertThat(before).as("the check wrote nothing").containsEntry(r + 3, "pending").containsEntry(r + 4, "sending")
                    .containsEntry(r + 6, "failed").containsEntry(r + 7, "failed");
            assertThat(after).containsEntry(r + 3, "sent").containsEntry(r + 4, "sent").containsEntry(r + 6, "sent")
                    .containsEntry(r + 7, "pending").containsEntry(r + 2, "sent").containsEntry(r + 5, "sending");
            assertThat(repaired.unresolved()).extracting(Reconciliation.Discrepancy::refundId)
                    .containsExactlyInAnyOrder(r + 2, r + 5, r + 8, "stray");
            assertThat(fence(r + 6)).as("repaired under the repair's fresh token").isEqualTo(repaired.token());
            assertThat(reconciliation.check(merchant).discrepancies()).extracting(Reconciliation.Discrepancy::refundId)
                    .containsExactlyInAnyOrder(r + 2, r + 5, r + 8, "stray");

            try (Lease busy = leases.tryAcquire(Merchants.resource(merchant), Duration.ofSeconds(10)).orElseThrow()) {
                assertThatThrownBy(() -> reconciliation.repair(merchant, leases, Duration.ofSeconds(10), false))
                        .isInstanceOf(Reconciliation.LeaseHeldException.class);
                assertThat(busy.isHeld()).isTrue();
            }
        }
    }

    // ---- helpers ----

    private static Map<String, Kind> kinds(Reconciliation.Report report) {
        return report.discrepancies().stream().collect(Collectors.toMap(Reconciliation.Discrepancy::refundId, Reconciliation.Discrepancy::kind));
    }

    private static void awaitListening(PaymentGateway gateway) {
        await("the gateway back on its port").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(gateway::listening);
    }

    private static List<GatewayRefund> refundsOf(List<GatewayRefund> ledger, String merchant) {
        return ledger.stream().filter(r -> r.merchant().equals(merchant)).toList();
    }

    private static BigDecimal sum(List<GatewayRefund> refunds) {
        return refunds.stream().map(GatewayRefund::amount).reduce(BigDecimal.ZERO, BigDecimal::add);
    }

    /** Each row of the merchant sent, and paid once under its own key with its own amount. */
    private void assertPaidOnce(List<GatewayRefund> ledger, String merchant, int expected) throws SQLException {
        List<GatewayRefund> mine = refundsOf(ledger, merchant);
        assertThat(mine).hasSize(expected);
        Map<String, String> keys = keys(merchant);
        Map<String, BigDecimal> amounts = amounts(merchant);
        for (GatewayRefund refund : mine) {
            assertThat(refund.idempotencyKey()).as(refund.reference()).isEqualTo(keys.get(refund.reference()));
            assertThat(refund.amount()).as(refund.reference()).isEqualByComparingTo(amounts.get(refund.reference()));
        }
        assertThat(states(merchant)).containsExactly(Map.entry("sent", (long) expected));
    }

    private void execute(String sql, Object... values) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement(sql)) {
            for (int i = 0; i < values.length; i++) {
                s.setObject(i + 1, values[i]);
            }
            s.executeUpdate();
        }
    }

    private void setState(String id, String state, long fence) throws SQLException {
        execute("UPDATE refund SET state = ?, fence = ? WHERE id = ?", state, fence, id);
    }

    private long fence(String id) throws SQLException {
        return column(id, "fence", Long.class);
    }

    private <T> T column(String id, String column, Class<T> type) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("SELECT " + column + " FROM refund WHERE id = ?")) {
            s.setString(1, id);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getObject(1, type);
            }
        }
    }

    private <T> Map<String, T> byId(String merchant, String column, Class<T> type) throws SQLException {
        Map<String, T> out = new TreeMap<>();
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("SELECT id, " + column + " FROM refund WHERE merchant = ?")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getObject(2, type));
                }
            }
        }
        return out;
    }

    private Map<String, String> keys(String merchant) throws SQLException {
        return byId(merchant, "idempotency_key", String.class);
    }

    private Map<String, BigDecimal> amounts(String merchant) throws SQLException {
        return byId(merchant, "amount", BigDecimal.class);
    }

    private Map<String, String> stateById(String merchant) throws SQLException {
        return byId(merchant, "state", String.class);
    }

    private List<String> reasons(String merchant) throws SQLException {
        return List.copyOf(byId(merchant, "failure_reason", String.class).values());
    }

    private Map<String, Long> states(String merchant) throws SQLException {
        return stateById(merchant).values().stream().collect(Collectors.groupingBy(x -> x, TreeMap::new, Collectors.counting()));
    }
}
