package dev.fenced.lab;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.cli.Connections;
import dev.fenced.cli.EventCodec;
import dev.fenced.cli.EventLine;
import dev.fenced.fleet.JobEvent;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.gateway.WebhookStats;
import dev.fenced.settlement.JournalSchema;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.WebhookReceiver;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;
import dev.fenced.cli.Progress;
import dev.fenced.settlement.SettlementEvent;
import javax.sql.DataSource;

/**
 * A Jepsen-style run on the fleet: one job per merchant published to a JetStream stream of the
 * run's own ({@link JobQueue}), taken by fleet worker processes ({@link ChaosWorkers}) while the
 * {@link FaultInjector} strikes on a seeded schedule; the harness only starts, pauses, kills and
 * replaces workers and breaks servers, and every redelivery is JetStream's. Then a drain without
 * faults until no job is left queued or in progress, and the {@link ExactlyOnceChecker}'s verdict
 * from the gateway's ledger, the database, every worker's history and the streams.
 */
final class ChaosHarness {
    private static final Duration DRAIN_LIMIT = Duration.ofMinutes(3);
    private static final Duration FIRST_JOB_LIMIT = Duration.ofMinutes(1);
    /** The longest wait after the drain for the provider's news: its sender retries a refused delivery for about 16 s. */
    private static final Duration NEWS_LIMIT = Duration.ofSeconds(40);
    /** Polls of the streams, a second apart, that must find them idle before a run with unsettled merchants gives up waiting. */
    private static final int IDLE_POLLS_BEFORE_GIVING_UP = 3;
    /** With keep-busy, no new round once fewer seconds of faults than this are left: the drain would settle it instead. */
    private static final Duration KEEP_BUSY_LEAD = Duration.ofSeconds(5);
    /** Looks, a second apart, that find the queue idle with refunds unsettled before keep-busy seeds a round anyway. */
    private static final int KEEP_BUSY_STALL_LOOKS = 10;

    private final ChaosSettings settings;
    private final PrintStream log;
    private final Progress progress;
    /** Every worker's lines, as they come: appended from the workers' reader threads, read while they come. */
    private final Queue<EventLine> history = new ConcurrentLinkedQueue<>();
    /** With keep-busy: the round of merchants seeded last, and looks in a row that found the queue idle with work left. */
    private int round = 1;
    private int stalledLooks;

    /** @param progress counts refunds settled (confirmed, or refused by the gateway), over every deployment's merchants */
    ChaosHarness(ChaosSettings settings, PrintStream log, Progress progress) {
        this.settings = settings;
        this.log = log;
        this.progress = progress;
    }

    /** Refunds the run must settle: every merchant's, and the second deployment's when one shares the gateway (key-reuse). */
    static long refundsToSettle(ChaosSettings settings) {
        int merchants = settings.merchants() + (settings.faults().contains(Fault.KEY_REUSE)
                ? SecondDeployment.merchantCount(settings.merchants()) : 0);
        return (long) merchants * settings.refunds();
    }

    private void record(EventLine line) {
        history.add(line);
        if (line instanceof EventLine.Event event && (event.type() == SettlementEvent.Type.CONFIRMED
                || event.type() == SettlementEvent.Type.FAILED)) {
            progress.step();
        }
    }

    private void say(String text) {
        if (log != null) {
            log.println("chaos: " + text);
        }
    }

    ChaosReport run() throws Exception {
        say("seed " + settings.seed() + " (replay with --seed " + settings.seed() + "), fencing " + (settings.fencing() ? "on" : "OFF")
                + (settings.trustKeys() ? ", workers trusting the gateway's keys for a day (the key-expiry's control)" : ""));
        Path ledger = Files.createTempDirectory("fenced-chaos").resolve("gateway-ledger.jsonl");
        try (ChaosBroker broker = ChaosBroker.start(settings);
             ChaosLeaseStore leases = ChaosLeaseStore.start(settings);
             ChaosDatabase postgres = ChaosDatabase.start(settings); HikariDataSource db = Connections.database(postgres.jdbcUrl(), 3);
             LabWebhooks news = settings.faults().contains(Fault.PROVIDER_NEWS) ? LabWebhooks.start(db) : null;
             ChaosGateway gateway = ChaosGateway.start(settings, ledger, news == null ? null : news.url())) {
            say("jobs on JetStream, on " + broker.describe() + "; " + leases.describe() + "; " + postgres.describe());
            return run(broker, leases, postgres, db, gateway, news);
        } finally {
            Files.deleteIfExists(ledger);
            Files.deleteIfExists(ledger.getParent());
        }
    }

    private ChaosReport run(ChaosBroker broker, ChaosLeaseStore leases, ChaosDatabase postgres, HikariDataSource db,
                            ChaosGateway gateway, LabWebhooks news) throws SQLException {
        List<String> merchants = seed(db, 1);
        String stream = JobQueue.uniqueName();
        String journalUrl = journalDatabase(postgres);
        Map<String, String> env = new HashMap<>(leases.environment());
        env.putAll(Map.of("FENCED_DB_URL", postgres.jdbcUrl(), "FENCED_GATEWAY_URL", gateway.url(), "FENCED_NATS_URL", broker.url(),
                "FENCED_JOURNAL_DB_URL", journalUrl));
        try (JobQueue queue = JobQueue.create(broker.connection(), stream, settings);
             HikariDataSource journal = Connections.readOnlyDatabase(journalUrl, 2)) {
            JournalSchema.migrate(journal);
            queue.publish(merchants);
            SecondDeployment second = settings.faults().contains(Fault.KEY_REUSE) ? SecondDeployment.start(postgres, env, settings, merchants,
                    broker.connection(), stream + "_K", this::record, this::say) : null;
            try (WorkerNetworks networks = Fault.partitioned(settings.faults()) ? WorkerNetworks.open() : null;
                 ChaosWorkers workers = new ChaosWorkers(settings, env, queue.stream(), this::record, this::say, networks)) {
                for (int i = 0; i < settings.workers(); i++) {
                    workers.start();
                }
                long start = System.currentTimeMillis();
                awaitFirstJob(workers, second);
                say(String.format("workers took their first jobs after %.1f s; faults strike for %d s", (System.currentTimeMillis() - start) / 1000.0,
                        settings.duration().toSeconds()));
                // A partitioned run's servers are all its own, on loopback: their URLs are the run's, never a user's.
                Map<Fault, Set<Integer>> links = networks == null ? Map.of() : Map.of(Fault.PARTITION_REDIS, leases.redisPorts(),
                        Fault.PARTITION_DB, postgres.ports(),
                        Fault.PARTITION_GATEWAY, Set.of(URI.create(gateway.url()).getPort()), Fault.PARTITION_NATS, Set.of(URI.create(broker.url()).getPort()));
                FaultInjector faults = new FaultInjector(settings, leases, postgres, gateway, broker, queue, links, this::say);
                if (second != null) {
                    faults.standing(Fault.KEY_REUSE);
                }
                if (news != null) {
                    faults.standing(Fault.PROVIDER_NEWS);
                }
                long faultsEnd = System.currentTimeMillis() + settings.duration().toMillis();
                long nextLook = 0;
                while (System.currentTimeMillis() < faultsEnd || faults.busy()) {
                    tend(workers, second);
                    faults.tick(workers::targets);
                    if (settings.keepBusy() && System.currentTimeMillis() >= nextLook) {
                        nextLook = System.currentTimeMillis() + 1_000;
                        if (!faults.databaseFrozen()) { // its inserts would wait for the frozen standby, and stop this loop
                            keepBusy(db, queue, merchants, faultsEnd);
                        }
                    }
                    WorkerProcess.sleep(10);
                }
                say("faults stop; draining");
                faults.stop();
                gateway.heal();
                workers.resumeAll();
                drain(db, queue, workers, second);
                workers.stop();
                if (second != null) {
                    second.stopWorker();
                }
                Map<Fault, String> told = new EnumMap<>(Fault.class);
                if (news != null) {
                    told.put(Fault.PROVIDER_NEWS, awaitNews(db, second, gateway, news));
                }
                if (settings.faults().contains(Fault.KEY_EXPIRY)) {
                    told.put(Fault.KEY_EXPIRY, keysForgotten(db, gateway));
                }
                if (settings.faults().contains(Fault.DB_FAILOVER)) {
                    told.put(Fault.DB_FAILOVER, faults.databaseFailovers());
                }
                if (settings.faults().contains(Fault.CLOCK_JUMP)) {
                    told.put(Fault.CLOCK_JUMP, earlyTakeovers(faults.clockJumps()));
                }
                if (networks != null) {
                    say("partitions made: " + faults.partitions().size());
                }
                ChaosReport report = report(db, journal, merchants, gateway, second, queue, faults, workers,
                        (System.currentTimeMillis() - start) / 1000.0, told);
                writeHistory();
                return report;
            } finally {
                if (second != null) {
                    second.close();
                }
            }
        }
    }

    /** Seeds a round of merchants ({@code c_000}..., then {@code c2_000}... for round 2) and their refunds. */
    private List<String> seed(HikariDataSource db, int number) {
        List<String> merchants = new ArrayList<>();
        for (int i = 0; i < settings.merchants(); i++) {
            String merchant = number == 1 ? String.format("c_%03d", i) : String.format("c%d_%03d", number, i);
            RefundSeeder.seed(db, merchant, merchant + "_r", settings.refunds(),
                    new BigDecimal("70.25").multiply(BigDecimal.valueOf(settings.refunds())), "EUR");
            merchants.add(merchant);
        }
        return merchants;
    }

    /**
     * With keep-busy: once no job is queued or in progress, every merchant settled (or, for
     * {@link #KEEP_BUSY_STALL_LOOKS} looks, some left with no job: dead-lettered or lost, which the
     * drain and the checker report), and more than {@link #KEEP_BUSY_LEAD} of faults is left, seeds
     * another round of as many new merchants and publishes their jobs, so that the faults meet work
     * for the whole run. A database or broker that does not answer (a fault) only puts it off.
     */
    private void keepBusy(HikariDataSource db, JobQueue queue, List<String> merchants, long faultsEnd) {
        try {
            if (faultsEnd - System.currentTimeMillis() < KEEP_BUSY_LEAD.toMillis() || !queue.idle()) {
                stalledLooks = 0;
                return;
            }
            Map<String, Long> unsettled = JobQueue.unsettledByMerchant(db);
            if (!unsettled.isEmpty() && ++stalledLooks < KEEP_BUSY_STALL_LOOKS) {
                return;
            }
            stalledLooks = 0;
            round++; // a round that fails half-way is not seeded again: the next takes new names
            List<String> more = new ArrayList<>();
            for (String merchant : seed(db, round)) {
                queue.publish(List.of(merchant));
                merchants.add(merchant);
                more.add(merchant);
            }
            say(String.format("round %d: %d more merchants of %d refunds each%s", round, more.size(), settings.refunds(),
                    unsettled.isEmpty() ? "" : "; " + unsettled.size() + " left unsettled with no job queued or in progress"));
        } catch (SQLException | RuntimeException notNow) {
            say("keep-busy: no new round now: " + notNow.getMessage());
        }
    }

    private static void tend(ChaosWorkers workers, SecondDeployment second) {
        workers.tend(System.currentTimeMillis());
        if (second != null) {
            second.tend();
        }
    }

    /** Faults strike once the work is under way: not while the workers' JVMs still start (up to a minute). */
    private void awaitFirstJob(ChaosWorkers workers, SecondDeployment second) {
        long deadline = System.currentTimeMillis() + FIRST_JOB_LIMIT.toMillis();
        while (System.currentTimeMillis() < deadline && history.stream().noneMatch(Events.ofJob(JobEvent.Type.RECEIVED))) {
            tend(workers, second);
            WorkerProcess.sleep(20);
        }
    }

    /**
     * Without faults, until no job is queued or in progress on either stream and every refund is
     * settled; when the streams stay idle with refunds unsettled (a job dead-lettered or lost),
     * nothing will ever take them: the drain ends and the checker says so.
     */
    private void drain(HikariDataSource db, JobQueue queue, ChaosWorkers workers, SecondDeployment second) throws SQLException {
        long deadline = System.currentTimeMillis() + DRAIN_LIMIT.toMillis();
        long nextPoll = 0;
        int idlePolls = 0;
        while (System.currentTimeMillis() < deadline) {
            tend(workers, second);
            if (System.currentTimeMillis() >= nextPoll) {
                nextPoll = System.currentTimeMillis() + 1_000;
                boolean idle = queue.idle() && (second == null || second.queue().idle());
                idlePolls = idle ? idlePolls + 1 : 0;
                if (idle && (settled(db, second) || idlePolls >= IDLE_POLLS_BEFORE_GIVING_UP)) {
                    return;
                }
            }
            WorkerProcess.sleep(10);
        }
        say("drain gave up after " + DRAIN_LIMIT.toSeconds() + " s with jobs still queued or in progress");
    }

    /**
     * Waits (at most {@link #NEWS_LIMIT}) until every refund's final word is due and the gateway has
     * delivered or given up every event, then polls each deployment's sent rows, as
     * {@code fenced webhooks --gateway-url} would: what the lost deliveries did not say. Returns what
     * the report prints for the fault.
     */
    private String awaitNews(HikariDataSource db, SecondDeployment second, ChaosGateway gateway, LabWebhooks news) {
        long deadline = System.currentTimeMillis() + NEWS_LIMIT.toMillis();
        long due = System.currentTimeMillis() + LabWebhooks.SETTLE_AFTER.toMillis();
        while (System.currentTimeMillis() < deadline && (System.currentTimeMillis() < due || gateway.webhookStats().waiting() > 0)) {
            WorkerProcess.sleep(50); // the gateway's own clock and sender: nothing here to move them faster
        }
        int polled = LabWebhooks.pollAll(db, gateway.url()) + (second == null ? 0 : LabWebhooks.pollAll(second.db(), gateway.url()));
        WebhookStats stats = gateway.webhookStats();
        Map<WebhookReceiver.Outcome, Integer> outcomes = news.outcomes();
        String text = String.format("webhooks: %d delivered (%d lost, %d duplicated, %d reordered); %d rows by webhook, %d by the poll",
                stats.delivered(), stats.lost(), stats.duplicated(), stats.reordered(),
                outcomes.getOrDefault(WebhookReceiver.Outcome.SETTLED, 0) + outcomes.getOrDefault(WebhookReceiver.Outcome.RETURNED, 0),
                polled);
        say(text);
        return text;
    }

    /**
     * What the key-expiry did: the refunds whose answers the gateway lost, and how many of them their
     * rows confirmed; none could be before the lookups came back, past the keys' retention, so each
     * was found by reference or, by a worker that trusts keys, sent again.
     */
    private String keysForgotten(HikariDataSource db, ChaosGateway gateway) throws SQLException {
        Set<String> lost = gateway.answersLost();
        long confirmed = GatewayCrossCheck.rows(db).stream().filter(GatewayCrossCheck.Row::confirmed)
                .filter(row -> lost.contains(row.gatewayReference())).count();
        String text = String.format("%d refunds' answers lost; %d of their rows confirmed with them after their keys were forgotten",
                lost.size(), confirmed);
        say("key-expiry: " + text);
        return text;
    }

    /**
     * What the clock-jumps did: an early takeover is a grant of the merchant to another worker after
     * the jump and before the holder answered the delivery it held (its run still going), each grant
     * counted once however many jumps it follows; then the writes the fence refused, and the leases
     * the holders lost.
     */
    private String earlyTakeovers(List<FaultInjector.ClockJump> jumps) {
        Map<String, List<EventLine>> byMerchant = history.stream().filter(line -> Events.merchant(line) != null)
                .collect(Collectors.groupingBy(Events::merchant));
        Set<EventLine.Event> early = new HashSet<>();
        for (FaultInjector.ClockJump jump : jumps) {
            earlyGrant(jump, byMerchant.getOrDefault(jump.merchant(), List.of())).ifPresent(early::add);
        }
        long firstJump = jumps.isEmpty() ? Long.MAX_VALUE : jumps.get(0).at();
        long refused = history.stream().filter(Events.ofType(SettlementEvent.Type.VIOLATION)).filter(line -> line.at() >= firstJump).count();
        long lost = history.stream().filter(Events.ofType(SettlementEvent.Type.LEASE_LOST)).filter(line -> line.at() >= firstJump).count();
        String text = String.format("%d jumps of Redis's clock; %d early takeovers (granted to another worker while the holder ran);"
                + " %d stale writes refused, %d leases lost", jumps.size(), early.size(), refused, lost);
        say("clock-jump: " + text);
        return text;
    }

    /**
     * The first grant of the jump's merchant to another worker after the jump and before the holder
     * answered its delivery of the job; none when the holder's answer is not in the history (killed,
     * or its line lost): then when its run ended is unknown.
     */
    private static Optional<EventLine.Event> earlyGrant(FaultInjector.ClockJump jump, List<EventLine> lines) {
        List<EventLine.Job> held = lines.stream().filter(line -> line instanceof EventLine.Job).map(EventLine.Job.class::cast)
                .filter(job -> job.worker().equals(jump.holder()) && job.sequence() == jump.sequence()).toList();
        long received = held.stream().filter(job -> job.type() == JobEvent.Type.RECEIVED && job.at() <= jump.at())
                .mapToLong(EventLine.Job::at).max().orElse(Long.MIN_VALUE);
        Optional<Long> answered = held.stream().filter(job -> job.type() != JobEvent.Type.RECEIVED && job.at() >= received)
                .map(EventLine.Job::at).min(Long::compare);
        if (answered.isEmpty()) {
            return Optional.empty();
        }
        return lines.stream().filter(Events.ofType(SettlementEvent.Type.ACQUIRED)).map(EventLine.Event.class::cast)
                .filter(grant -> !jump.holder().equals(grant.worker()) && grant.at() >= jump.at() && grant.at() < answered.get())
                .min(Comparator.comparingLong(EventLine.Event::at));
    }

    private static boolean settled(HikariDataSource db, SecondDeployment second) throws SQLException {
        return JobQueue.unsettledByMerchant(db).isEmpty() && (second == null || second.settled());
    }

    /** The settlement journal's store: a second database on the embedded server. */
    private static String journalDatabase(ChaosDatabase postgres) throws SQLException {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(postgres.jdbcUrl()); java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE chaos_journal");
        }
        return postgres.jdbcUrl("chaos_journal");
    }

    private ChaosReport report(HikariDataSource db, DataSource journal, List<String> merchants, ChaosGateway gateway, SecondDeployment second,
                               JobQueue queue, FaultInjector faults, ChaosWorkers workers, double seconds, Map<Fault, String> told)
            throws SQLException {
        Map<Fault, Integer> injected = faults.injected();
        List<EventLine> history = List.copyOf(this.history);
        List<ExactlyOnceChecker.Deployment> deployments = new ArrayList<>(List.of(new ExactlyOnceChecker.Deployment(db, merchants, journal)));
        ChaosReport.Jobs jobs = queue.tally(merchants, history);
        if (second != null) {
            deployments.add(new ExactlyOnceChecker.Deployment(second.db(), second.merchants(), null));
            jobs = jobs.plus(second.queue().tally(second.merchants(), history));
        }
        List<GatewayRefund> ledger = gateway.ledger();
        ExactlyOnceChecker.Findings findings = new ExactlyOnceChecker(settings.safe(), told.containsKey(Fault.PROVIDER_NEWS))
                .check(deployments, gateway.url(), ledger, history, jobs);
        return new ChaosReport(settings.seed(), settings.fencing(), settings.trustKeys(), settings.tokenSource(), merchants.size(),
                findings.refunds(), settings.workers(), settings.concurrency(), settings.gatewayLatency().toMillis(), workers.started(),
                ledger.size(), settled(db, second), jobs, ChaosReport.faults(settings, injected, told),
                faults.partitions().stream().map(FaultInjector.Partition::describe).toList(), ChaosReport.operations(history),
                findings.checks(), findings.violations(), findings.verdict(), seconds);
    }

    private void writeHistory() {
        if (settings.history() == null) {
            return;
        }
        try {
            Files.write(settings.history(), history.stream().map(EventCodec::write).toList(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the history to " + settings.history(), e);
        }
    }
}
