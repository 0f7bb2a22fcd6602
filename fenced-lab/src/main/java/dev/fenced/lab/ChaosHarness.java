package dev.fenced.lab;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.cli.Connections;
import dev.fenced.cli.EventCodec;
import dev.fenced.cli.EventLine;
import dev.fenced.embedded.EmbeddedPostgresServer;
import dev.fenced.embedded.EmbeddedRedisFailoverGroup;
import dev.fenced.gateway.GatewayRefund;
import dev.fenced.settlement.RefundSeeder;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A Jepsen-style run: merchants settled by worker processes that take jobs from a {@link JobQueue}
 * with a visibility timeout, while the {@link FaultInjector} strikes on a seeded schedule; then a
 * drain without faults, and the {@link ExactlyOnceChecker}'s verdict from the gateway's ledger,
 * the database and every worker's history.
 */
final class ChaosHarness {
    private static final Duration DRAIN_LIMIT = Duration.ofMinutes(3);

    private final ChaosSettings settings;
    private final PrintStream log;
    private final List<EventLine> history = new CopyOnWriteArrayList<>();

    ChaosHarness(ChaosSettings settings, PrintStream log) {
        this.settings = settings;
        this.log = log;
    }

    private void say(String text) {
        if (log != null) {
            log.println("chaos: " + text);
        }
    }

    ChaosReport run() throws Exception {
        say("seed " + settings.seed() + " (replay with --seed " + settings.seed() + "), fencing " + (settings.fencing() ? "on" : "OFF"));
        Path ledger = Files.createTempDirectory("fenced-chaos").resolve("gateway-ledger.jsonl");
        try (EmbeddedRedisFailoverGroup redis = EmbeddedRedisFailoverGroup.start(); EmbeddedPostgresServer postgres = EmbeddedPostgresServer.start();
             HikariDataSource db = Connections.database(postgres.jdbcUrl(), 3); ChaosGateway gateway = ChaosGateway.start(settings, ledger)) {
            return run(redis, postgres, db, gateway);
        } finally {
            Files.deleteIfExists(ledger);
            Files.deleteIfExists(ledger.getParent());
        }
    }

    private ChaosReport run(EmbeddedRedisFailoverGroup redis, EmbeddedPostgresServer postgres, HikariDataSource db, ChaosGateway gateway)
            throws SQLException {
        List<String> merchants = seed(db);
        JobQueue queue = new JobQueue(merchants, settings.ttl()); // a holder silent for one TTL has lost its job
        Map<String, String> env = Map.of("FENCED_REDIS_URL", redis.sentinelUri(), "FENCED_DB_URL", postgres.jdbcUrl(),
                "FENCED_GATEWAY_URL", gateway.url());
        SecondDeployment second = settings.faults().contains(Fault.KEY_REUSE)
                ? SecondDeployment.start(postgres, env, settings, merchants, history::add, this::say) : null;
        try {
            ChaosWorkers workers = new ChaosWorkers(settings, env, (slot, line) -> {
                if (!(line instanceof EventLine.Ready)) {
                    history.add(line);
                }
                queue.onLine(slot, line);
            });
            for (int i = 0; i < settings.workers(); i++) {
                workers.start();
            }
            long start = System.currentTimeMillis();
            FaultInjector faults = new FaultInjector(settings, redis, postgres.jdbcUrl(), gateway);
            if (second != null) {
                faults.standing(Fault.KEY_REUSE);
            }
            long faultsEnd = start + settings.duration().toMillis();
            while (System.currentTimeMillis() < faultsEnd) {
                dispatch(queue, workers, second);
                faults.tick(() -> targets(queue, workers));
                WorkerProcess.sleep(10);
            }
            say("faults stop; draining");
            faults.stop();
            gateway.heal();
            workers.resumeAll();
            boolean drained = drain(db, queue, workers, second);
            workers.stop();
            ChaosReport report = report(db, merchants, gateway, second, faults, workers, drained, (System.currentTimeMillis() - start) / 1000.0);
            writeHistory();
            return report;
        } finally {
            if (second != null) {
                second.close();
            }
        }
    }

    private List<String> seed(HikariDataSource db) {
        List<String> merchants = new ArrayList<>();
        for (int i = 0; i < settings.merchants(); i++) {
            String merchant = String.format("c_%03d", i);
            RefundSeeder.seed(db, merchant, merchant + "_r", settings.refunds(),
                    new BigDecimal("70.25").multiply(BigDecimal.valueOf(settings.refunds())), "EUR");
            merchants.add(merchant);
        }
        return merchants;
    }

    private static void dispatch(JobQueue queue, ChaosWorkers workers, SecondDeployment second) {
        if (second != null) {
            second.dispatch();
        }
        queue.dispatch(workers.tend(System.currentTimeMillis()));
    }

    /** Running workers, those holding a job if any does: a fault on one of them is the one that can do harm. */
    private static List<ChaosWorkers.Slot> targets(JobQueue queue, ChaosWorkers workers) {
        List<ChaosWorkers.Slot> running = workers.running();
        List<ChaosWorkers.Slot> busy = running.stream().filter(s -> queue.holdsAJob(s.name())).toList();
        return busy.isEmpty() ? running : busy;
    }

    /** Without faults: requeues every merchant not fully settled, until none is left pending or sending. */
    private static boolean drain(HikariDataSource db, JobQueue queue, ChaosWorkers workers, SecondDeployment second) throws SQLException {
        long deadline = System.currentTimeMillis() + DRAIN_LIMIT.toMillis();
        long nextCheck = 0;
        while (System.currentTimeMillis() < deadline) {
            dispatch(queue, workers, second);
            if (System.currentTimeMillis() >= nextCheck) {
                nextCheck = System.currentTimeMillis() + 1_000;
                Map<String, Long> unsettled = JobQueue.unsettledByMerchant(db);
                boolean secondDone = second == null || second.drained();
                if (unsettled.isEmpty() && secondDone) {
                    return true;
                }
                queue.requeueIfIdle(unsettled.keySet());
            }
            WorkerProcess.sleep(10);
        }
        return JobQueue.unsettledByMerchant(db).isEmpty() && (second == null || second.drained());
    }

    private ChaosReport report(HikariDataSource db, List<String> merchants, ChaosGateway gateway, SecondDeployment second,
                               FaultInjector faults, ChaosWorkers workers, boolean drained, double seconds) throws SQLException {
        Map<Fault, Integer> injected = faults.injected();
        // Redis-issued tokens can repeat after Redis loses data (a lagging replica promoted, a restart);
        // the fence still holds, and database-issued tokens are the cure: counted as violations only there.
        boolean redisDataLost = !settings.dbTokens() && injected.keySet().stream().anyMatch(Fault::losesRedisData);
        List<ExactlyOnceChecker.Deployment> deployments = new ArrayList<>(List.of(new ExactlyOnceChecker.Deployment(db, merchants)));
        if (second != null) {
            deployments.add(new ExactlyOnceChecker.Deployment(second.db(), second.merchants()));
        }
        List<GatewayRefund> ledger = gateway.ledger();
        ExactlyOnceChecker.Findings findings = new ExactlyOnceChecker(settings.fencing(), redisDataLost)
                .check(deployments, gateway.url(), ledger, history);
        return new ChaosReport(settings.seed(), settings.fencing(), settings.dbTokens() ? "database" : "redis", merchants.size(),
                findings.refunds(), settings.workers(), settings.concurrency(), settings.gatewayLatency().toMillis(), workers.started(),
                ledger.size(), drained, ChaosReport.faults(settings, injected), ChaosReport.operations(history), findings.checks(),
                findings.violations(), findings.verdict(), seconds);
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
