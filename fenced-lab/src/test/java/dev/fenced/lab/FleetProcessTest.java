package dev.fenced.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.cli.Connections;
import dev.fenced.cli.EventLine;
import dev.fenced.fleet.Broker;
import dev.fenced.fleet.JobEvent;
import dev.fenced.fleet.JobStream;
import dev.fenced.fleet.SettlementJobs;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.RefundSummary;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestNats;
import dev.fenced.testing.servers.TestRedis;
import io.nats.client.Connection;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fleet as processes: {@code fenced worker}s (the lab's variant, for breakpoints and the
 * negative control) fed by a real JetStream, frozen with SIGSTOP, killed with SIGKILL and drained
 * with SIGTERM. Every redelivery is JetStream's; the test only signals processes.
 */
class FleetProcessTest {
    private static final Duration LONG = Duration.ofMinutes(2);
    private static HikariDataSource db;
    private static Connection nats;
    private static final List<JobStream> STREAMS = new ArrayList<>();

    @BeforeAll
    static void connect() {
        db = Connections.database(TestDatabases.postgresUrl(), 4);
        nats = Broker.connect(TestNats.url(), Duration.ofSeconds(5), "fleet-process-test");
    }

    @AfterAll
    static void close() throws Exception {
        if (nats != null) {
            for (JobStream stream : STREAMS) {
                stream.delete(nats);
            }
            nats.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private record Setup(String merchant, String stream, Map<String, String> env) {
    }

    private static Setup enqueued(PaymentGateway gateway, int refunds) {
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(db, merchant, merchant + "_r", refunds, BigDecimal.TEN.multiply(BigDecimal.valueOf(refunds)), "EUR");
        String name = "T_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10).toUpperCase(Locale.ROOT);
        JobStream stream = JobStream.builder().stream(name).ackWait(Duration.ofSeconds(2)).build();
        STREAMS.add(stream);
        SettlementJobs.on(nats, stream).enqueue(merchant);
        return new Setup(merchant, name, Map.of("FENCED_REDIS_URL", TestRedis.uri(), "FENCED_DB_URL", TestDatabases.postgresUrl(),
                "FENCED_GATEWAY_URL", gateway.url(), "FENCED_NATS_URL", TestNats.url(), "FENCED_JOURNAL_DB_URL", TestDatabases.journalUrl()));
    }

    private static WorkerProcess worker(String name, Setup setup, String... extra) {
        List<String> args = new ArrayList<>(List.of("lab-worker", "--name", name, "--stream", setup.stream(), "--jobs", "1",
                "--ttl", "2s", "--ack-wait", "2s", "--events"));
        args.addAll(List.of(extra));
        if (!args.contains("--concurrency")) {
            args.addAll(List.of("--concurrency", "1"));
        }
        return WorkerProcess.start(name, args, setup.env());
    }

    private static void assertPaidOnce(PaymentGateway gateway, String merchant, int refunds) {
        List<GatewayRefund> mine = gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).toList();
        assertThat(mine).hasSize(refunds);
        assertThat(mine.stream().map(GatewayRefund::reference).distinct().count()).isEqualTo(refunds);
    }

    /** SIGTERM: the worker drains and exits 0. */
    private static void drain(WorkerProcess worker) {
        worker.signal("TERM");
        assertThat(worker.awaitExit(Duration.ofSeconds(60))).as("%s drained: %s", worker.name(), worker.stderrTail()).isZero();
    }

    /**
     * A is frozen holding a claimed refund past AckWait; JetStream redelivers its job to B, whose
     * token takes the merchant over; A is resumed and its confirm is refused. Control: without the
     * fence, A's stale confirm is accepted.
     */
    @ParameterizedTest(name = "fencing {0}")
    @ValueSource(booleans = {true, false})
    void aWorkerFrozenPastAckWaitLosesItsJobAndItsStaleWritesAreRefused(boolean fencing) {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(5)).build())) {
            Setup setup = enqueued(gateway, 40);
            String stalled = RefundSeeder.refundId(setup.merchant() + "_r", 10);
            String[] knobs = fencing ? new String[0] : new String[] {"--no-fence"};
            List<String> aArgs = new ArrayList<>(List.of(knobs));
            aArgs.addAll(List.of("--pause-at", "after-claim:" + stalled));
            try (WorkerProcess a = worker("A", setup, aArgs.toArray(String[]::new))) {
                a.awaitEvent(Events.ofType(SettlementEvent.Type.BREAKPOINT), LONG, "the breakpoint");
                a.signal("STOP");
                try (WorkerProcess b = worker("B", setup, knobs)) {
                    EventLine acked = b.awaitEvent(Events.ofJob(JobEvent.Type.ACKED), LONG, "B finishing the redelivered job");
                    // The job A holds, by its stream sequence: a nats-server before 2.10.14 may number
                    // the redelivery 1 (nats-server#5305), so its delivery count proves nothing here.
                    EventLine.Job taken = (EventLine.Job) a.firstEvent(Events.ofJob(JobEvent.Type.RECEIVED)).orElseThrow();
                    assertThat(((EventLine.Job) acked).sequence()).as("A's job, redelivered by JetStream").isEqualTo(taken.sequence());
                    long tokenB = Events.token(b.awaitEvent(Events.ofType(SettlementEvent.Type.ACQUIRED), LONG, "B's lease"));
                    a.signal("CONT");
                    a.writeLine("go");
                    a.awaitEvent(Events.ofJob(JobEvent.Type.LEFT, JobEvent.Type.ACKED), LONG, "A's answer after it woke");
                    long staleConfirms = a.events().stream().filter(Events.ofType(SettlementEvent.Type.CONFIRMED))
                            .filter(e -> e.at() >= acked.at()).count();
                    if (fencing) {
                        assertThat(a.firstEvent(Events.ofType(SettlementEvent.Type.VIOLATION).and(Events.about(stalled))))
                                .as("A's confirm of %s refused", stalled).isPresent();
                        assertThat(staleConfirms).as("stale confirms accepted").isZero();
                        assertThat(RefundSummary.of(db, setup.merchant()).highestFence()).isEqualTo(tokenB);
                    } else {
                        assertThat(staleConfirms).as("control: stale confirms accepted without the fence").isPositive();
                    }
                    assertPaidOnce(gateway, setup.merchant(), 40);
                    drain(b);
                }
                drain(a);
            }
        }
    }

    /**
     * The journal, a second database: A settles every refund and is frozen inside its journal
     * transaction, after reading which lines are missing; JetStream hands its job to B, whose
     * append waits for A's transaction instead of writing beside it (up to the lock bound, then
     * the job is retried); A is resumed and commits, and the next holder finds the lines there:
     * one line per paid refund, with the token that confirmed it, in token order. Control: without
     * the guard, B appends while A is frozen and A's stale append lands after it, a second line for
     * every refund.
     */
    @ParameterizedTest(name = "journal guard {0}")
    @ValueSource(booleans = {true, false})
    void aWorkerFrozenInItsJournalTransactionNeverDoublesTheJournal(boolean guard) throws Exception {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(2)).build());
             HikariDataSource journalDb = Connections.database(TestDatabases.journalUrl(), 2)) {
            dev.fenced.settlement.JournalSchema.migrate(journalDb);
            Setup setup = enqueued(gateway, 20);
            String[] knobs = guard ? new String[0] : new String[] {"--no-journal-guard"};
            List<String> aArgs = new ArrayList<>(List.of(knobs));
            aArgs.addAll(List.of("--pause-at", "in-journal:" + setup.merchant()));
            try (WorkerProcess a = worker("A", setup, aArgs.toArray(String[]::new))) {
                a.awaitEvent(Events.ofType(SettlementEvent.Type.BREAKPOINT), LONG, "A in its journal transaction");
                a.signal("STOP");
                try (WorkerProcess b = worker("B", setup, knobs)) {
                    b.awaitEvent(Events.ofType(SettlementEvent.Type.ACQUIRED), LONG, "B taking the merchant over");
                    boolean bJournaledWhileAFrozen = journaledWithin(b, Duration.ofSeconds(2));
                    a.signal("CONT");
                    a.writeLine("go");
                    // The job done by the next holder, after A's append: B's retry, or A's own once its stale run has ended,
                    // when JetStream hands the retried job to whichever worker's pull is waiting (both are free by then).
                    await("the job done by the holder after A").atMost(LONG).pollInterval(Duration.ofMillis(50))
                            .until(() -> a.firstEvent(Events.ofJob(JobEvent.Type.ACKED)).or(() -> b.firstEvent(Events.ofJob(JobEvent.Type.ACKED)))
                                    .isPresent());
                    a.awaitEvent(Events.ofJob(JobEvent.Type.LEFT, JobEvent.Type.ACKED), LONG, "A's answer after it woke");
                    List<dev.fenced.settlement.JournalLine> lines = dev.fenced.settlement.SettlementJournal.in(journalDb).lines(setup.merchant());
                    Map<String, Long> fences = new java.util.HashMap<>();
                    try (java.sql.Connection c = db.getConnection();
                         java.sql.PreparedStatement q = c.prepareStatement("SELECT id, fence FROM refund WHERE merchant = ? AND state = 'sent'")) {
                        q.setString(1, setup.merchant());
                        try (java.sql.ResultSet rs = q.executeQuery()) {
                            while (rs.next()) {
                                fences.put(rs.getString(1), rs.getLong(2));
                            }
                        }
                    }
                    assertThat(fences).hasSize(20);
                    long lineCount = lines.size();
                    long refundsWithLines = lines.stream().map(dev.fenced.settlement.JournalLine::refundId).distinct().count();
                    boolean inTokenOrder = true;
                    for (int i = 1; i < lines.size(); i++) {
                        inTokenOrder &= lines.get(i).writtenBy() >= lines.get(i - 1).writtenBy();
                    }
                    if (guard) {
                        assertThat(bJournaledWhileAFrozen).as("B's append waited for A's open transaction").isFalse();
                        assertThat(lineCount).as("one line per paid refund").isEqualTo(20);
                        assertThat(lines).allMatch(line -> line.token() == fences.get(line.refundId()), "token = the refund's fence");
                        assertThat(inTokenOrder).as("no line from a stale token after a newer one").isTrue();
                    } else {
                        assertThat(bJournaledWhileAFrozen).as("control: B appended beside A's open transaction").isTrue();
                        assertThat(lineCount).as("control: the stale append doubled the journal").isGreaterThan(refundsWithLines);
                        assertThat(inTokenOrder).as("control: a stale token's lines after a newer one's").isFalse();
                    }
                    assertThat(refundsWithLines).isEqualTo(20);
                    assertPaidOnce(gateway, setup.merchant(), 20);
                    drain(b);
                }
                drain(a);
            }
        }
    }

    /** A is killed inside its journal transaction: its append rolls back, and B's end-of-run append writes every line A confirmed. */
    @Test
    void aWorkerKilledInItsJournalTransactionLeavesTheLinesToTheNextHolder() {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(2)).build());
             HikariDataSource journalDb = Connections.database(TestDatabases.journalUrl(), 2)) {
            dev.fenced.settlement.JournalSchema.migrate(journalDb);
            Setup setup = enqueued(gateway, 15);
            long tokenA;
            try (WorkerProcess a = worker("A", setup, "--pause-at", "in-journal:" + setup.merchant())) {
                tokenA = Events.token(a.awaitEvent(Events.ofType(SettlementEvent.Type.ACQUIRED), LONG, "A's lease"));
                a.awaitEvent(Events.ofType(SettlementEvent.Type.BREAKPOINT), LONG, "A in its journal transaction");
                a.signal("KILL");
                a.awaitExit(Duration.ofSeconds(30));
            }
            try (WorkerProcess b = worker("B", setup)) {
                b.awaitEvent(Events.ofJob(JobEvent.Type.ACKED), LONG, "B finishing the job");
                List<dev.fenced.settlement.JournalLine> lines = dev.fenced.settlement.SettlementJournal.in(journalDb).lines(setup.merchant());
                assertThat(lines).hasSize(15);
                assertThat(lines).allMatch(line -> line.token() == tokenA && line.writtenBy() > tokenA,
                        "confirmed by A, written by the next holder");
                assertPaidOnce(gateway, setup.merchant(), 15);
                drain(b);
            }
        }
    }

    /** A is killed between the gateway's answer and its confirm; JetStream redelivers the job and B finishes it: every refund paid once. */
    @Test
    void aKilledWorkersJobIsRedeliveredAndFinished() {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(5)).build())) {
            Setup setup = enqueued(gateway, 30);
            String victim = RefundSeeder.refundId(setup.merchant() + "_r", 12);
            try (WorkerProcess a = worker("A", setup, "--pause-at", "after-gateway:" + victim)) {
                a.awaitEvent(Events.ofType(SettlementEvent.Type.BREAKPOINT), LONG, "the breakpoint");
                a.signal("KILL");
                a.awaitExit(Duration.ofSeconds(30));
            }
            try (WorkerProcess b = worker("B", setup)) {
                b.awaitEvent(Events.ofJob(JobEvent.Type.ACKED), LONG, "B finishing the job");
                assertThat(b.firstEvent(Events.ofType(SettlementEvent.Type.CHECKED).and(Events.about(victim))))
                        .as("the killed worker's refund looked up by key first").isPresent();
                assertPaidOnce(gateway, setup.merchant(), 30);
                assertThat(RefundSummary.of(db, setup.merchant()).rowsByState()).containsExactly(Map.entry("sent", 30L));
                drain(b);
            }
        }
    }

    /** SIGTERM mid-job: no new claim, what is in flight confirmed, nothing left claimed, exit 0; the next worker finishes. */
    @Test
    void sigtermDrainsWithNothingLeftClaimed() {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(40)).build())) {
            Setup setup = enqueued(gateway, 80);
            try (WorkerProcess a = worker("A", setup, "--concurrency", "4")) {
                a.awaitEvent(line -> a.events().stream().filter(Events.ofType(SettlementEvent.Type.CONFIRMED)).count() >= 8, LONG,
                        "eight confirms");
                drain(a);
                assertThat(a.firstEvent(Events.ofJob(JobEvent.Type.HANDED_BACK))).as("the job handed back").isPresent();
            }
            RefundSummary between = RefundSummary.of(db, setup.merchant());
            assertThat(between.count("sending")).as("claimed and left by the drain").isZero();
            assertThat(between.count("sent")).isBetween(8L, 79L);
            try (WorkerProcess b = worker("B", setup, "--concurrency", "4")) {
                b.awaitEvent(Events.ofJob(JobEvent.Type.ACKED), LONG, "B finishing the job");
                assertPaidOnce(gateway, setup.merchant(), 80);
                drain(b);
            }
        }
    }

    /**
     * Whether the worker appends to the journal within {@code window}. Without the guard B appends
     * beside A's open transaction and this returns as soon as it has; with it B waits on A, and as
     * nothing tells that B is waiting, B is given the whole window to show it does not append.
     */
    private static boolean journaledWithin(WorkerProcess worker, Duration window) {
        try {
            await("B's journal append while A is frozen").atMost(window).pollInterval(Duration.ofMillis(50))
                    .until(() -> worker.firstEvent(Events.ofType(SettlementEvent.Type.JOURNALED)).isPresent());
            return true;
        } catch (ConditionTimeoutException notInTheWindow) {
            return false;
        }
    }
}
