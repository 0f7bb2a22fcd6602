package dev.fenced.lab;

import dev.fenced.cli.EventLine;
import dev.fenced.cli.UsageException;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.LeaseView;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.RefundSummary;
import dev.fenced.settlement.SettlementEvent.Type;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

/**
 * The article's worked example, for real, under one {@link Mechanism}: worker A (token 33) is
 * frozen with SIGSTOP when it reaches the stalled refund; its lease expires; worker B (token 34),
 * handed the job by "the queue", takes over; A is resumed with SIGCONT. What the gateway and the
 * database then hold is the measurement ({@link DemoTally}). Every time is the article's divided by the speed.
 */
final class Scenario {
    static final String MERCHANT = "m_4471";
    private static final Duration TIMEOUT = Duration.ofMinutes(5);

    /** How many refunds and their total; the article's are 1,200 and 84,300.00 EUR, stalled at r_815. */
    record Story(int refunds, BigDecimal total) {
        static final Story ARTICLE = new Story(1200, new BigDecimal("84300.00"));

        /** r_815 in the article's story; the same fraction of the way through a smaller one. */
        String stalledRefund() {
            int index = (int) Math.max(1, Math.min(refunds, Math.round(refunds * 815.0 / 1200)));
            return RefundSeeder.refundId(index);
        }
    }

    private final double speed;
    private final Mechanism mechanism;
    private final Story story;
    private final PrintStream progress;
    private final List<TimelineEntry> notes = new CopyOnWriteArrayList<>();
    private long startMillis;

    static double requireValidSpeed(double speed) {
        if (!(speed >= 1 && speed <= 100)) {
            throw new UsageException("--speed must be between 1 and 100, got " + speed);
        }
        return speed;
    }

    Scenario(double speed, Mechanism mechanism, Story story, PrintStream progress) {
        this.speed = requireValidSpeed(speed);
        this.mechanism = mechanism;
        this.story = story;
        this.progress = progress;
    }

    private Duration scaled(Duration articleTime) {
        return Duration.ofMillis(Math.max(1, Math.round(articleTime.toMillis() / speed)));
    }

    private void note(String what, long token) {
        TimelineEntry entry = new TimelineEntry(System.currentTimeMillis() - startMillis, TimelineEntry.ORCHESTRATOR, what, null, token, null);
        notes.add(entry);
        if (progress != null) {
            progress.printf("  %7.2fs  %-4s %s%n", entry.elapsedMs() / 1000.0, TimelineEntry.ORCHESTRATOR, what);
        }
    }

    /** Plays the story once and reports what the gateway, the database and the workers saw. */
    DemoReport run(ScenarioServers servers) {
        Path ledger;
        try {
            ledger = Files.createTempDirectory("fenced-scenario").resolve("gateway-ledger.jsonl");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // Started first, so that its line comes with the other servers' before the story begins.
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(scaled(Duration.ofMillis(20)))
                .idempotency(mechanism.idempotency()).ledgerFile(ledger).build())) {
            if (progress != null) {
                progress.printf("  %-9s %s%n", "gateway", "embedded simulated gateway on " + gateway.url().substring("http://".length()));
            }
            startMillis = System.currentTimeMillis();
            String resource = Merchants.resource(MERCHANT);
            servers.resetForNextRun(resource);
            LeaseView before = servers.lease(resource);
            if (before.highestTokenIssued() > 32) {
                // Only a given store keeps tokens from an earlier run: embedded ones are new or reset.
                throw new UsageException("the tokens for " + resource + " are already at " + before.highestTokenIssued() + " in "
                        + servers.backend.label() + " from " + servers.leaseSource.origin() + "; the story needs a fresh one: "
                        + servers.leaseSource.freshAdvice());
            }
            try {
                RefundSeeder.seed(servers.db, MERCHANT, story.refunds(), story.total(), "EUR");
            } catch (IllegalStateException e) { // the merchant's rows are there: only in a given database, embedded ones are new or reset
                throw new UsageException(e.getMessage() + " in the database from " + servers.dbSource.origin()
                        + "; the story needs a fresh one: " + servers.dbSource.freshAdvice());
            }
            servers.tokensAbove(resource, 32);
            note("seeded " + MERCHANT + ": " + story.refunds() + " refunds, " + story.total() + " EUR; tokens above 32", 0);
            return play(servers, resource, gateway);
        }
    }

    private DemoReport play(ScenarioServers servers, String resource, PaymentGateway gateway) {
        String stalled = story.stalledRefund();
        Duration ttl = scaled(mechanism.articleTtl());
        Map<String, String> env = workerEnvironment(servers, gateway);
        List<String> common = new ArrayList<>(List.of("lab-settle", "--merchant", MERCHANT, "--ttl", ttl.toMillis() + "ms", "--events"));
        common.addAll(mechanism.workerFlags());
        List<String> argsA = new ArrayList<>(common);
        argsA.addAll(List.of("--name", "A", "--pause-at", mechanism.pausePhase() + ":" + stalled));
        List<String> argsB = new ArrayList<>(common);
        argsB.addAll(List.of("--name", "B", "--start-on-stdin"));

        long pausedAt;
        long resumedAt;
        try (WorkerProcess a = WorkerProcess.start("A", argsA, env)) {
            note("worker A started as process " + a.pid() + " (" + mechanism.label() + ", lease TTL " + ttl.toMillis() + " ms)", 0);
            a.awaitEvent(Events.ofType(Type.BREAKPOINT), TIMEOUT, "the breakpoint at " + stalled);
            a.signal("STOP");
            await(a::isStopped, Duration.ofSeconds(10), "worker A to stop");
            pausedAt = System.currentTimeMillis();
            long tokenA = a.firstEvent(Events.ofType(Type.ACQUIRED)).map(Events::token).orElse(0L);
            note("SIGSTOP worker A at " + mechanism.pausePhase() + " " + stalled + ": the whole JVM, renewal thread included, is frozen", tokenA);
            a.writeLine("continue"); // read only when A runs again

            try (WorkerProcess b = WorkerProcess.start("B", argsB, env)) {
                await(() -> !servers.lease(resource).held(), TIMEOUT, "A's lease to expire");
                note(servers.backend.label() + " expired A's lease " + resource, tokenA);
                WorkerProcess.sleep(scaled(Duration.ofSeconds(1)).toMillis());
                note("the queue redelivers the job to worker B (process " + b.pid() + ")", 0);
                b.writeLine("go");
                EventLine acquiredB = b.awaitEvent(Events.ofType(Type.ACQUIRED), TIMEOUT, "its lease");
                b.awaitEvent(Events.ofType(Type.CONFIRMED, Type.FAILED).and(Events.about(stalled)), TIMEOUT, "its confirm of " + stalled);
                long resumeAt = acquiredB.at() + scaled(Duration.ofSeconds(3)).toMillis();
                await(() -> System.currentTimeMillis() >= resumeAt, TIMEOUT, "the resume time");
                a.signal("CONT");
                resumedAt = System.currentTimeMillis();
                note("SIGCONT worker A: it wakes up believing it still holds the lease", tokenA);
                int exitA = a.awaitExit(TIMEOUT);
                int exitB = b.awaitExit(TIMEOUT);
                note("workers exited: A with " + exitA + ", B with " + exitB, 0);
                return new DemoTally(mechanism, speed, story, startMillis).report(gateway.ledger(),
                        RefundSummary.of(servers.db, MERCHANT).rowsByState(), DemoTally.Worker.of(a, exitA), DemoTally.Worker.of(b, exitB),
                        pausedAt, resumedAt, notes);
            }
        }
    }

    /** Kills a holder with SIGKILL and measures how long the merchant stays blocked: the outage a TTL costs. */
    double measureCrashOutageArticleSeconds(ScenarioServers servers) {
        String resource = Merchants.resource(MERCHANT);
        servers.resetForNextRun(resource);
        RefundSeeder.seed(servers.db, MERCHANT, story.refunds(), story.total(), "EUR");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(scaled(Duration.ofMillis(20)))
                .idempotency(mechanism.idempotency()).build())) {
            Map<String, String> env = workerEnvironment(servers, gateway);
            List<String> args = new ArrayList<>(List.of("lab-settle", "--merchant", MERCHANT, "--events", "--name", "crashing",
                    "--ttl", scaled(mechanism.articleTtl()).toMillis() + "ms"));
            args.addAll(mechanism.workerFlags());
            try (WorkerProcess worker = WorkerProcess.start("crashing", args, env)) {
                worker.awaitEvent(Events.ofType(Type.CLAIMED), TIMEOUT, "its first claim");
                worker.signal("KILL");
                long killedAt = System.nanoTime();
                worker.awaitExit(Duration.ofSeconds(30));
                await(() -> !servers.lease(resource).held(), Duration.ofMinutes(10), "the dead holder's lease to expire");
                return articleSeconds((System.nanoTime() - killedAt) / 1_000_000, speed);
            }
        }
    }

    private static Map<String, String> workerEnvironment(ScenarioServers servers, PaymentGateway gateway) {
        Map<String, String> env = new HashMap<>(servers.leaseEnvironment());
        env.put("FENCED_DB_URL", servers.dbUrl);
        env.put("FENCED_GATEWAY_URL", gateway.url());
        return Map.copyOf(env);
    }

    /** Real milliseconds at this speed, in article seconds to one decimal. */
    static double articleSeconds(long realMillis, double speed) {
        return BigDecimal.valueOf(realMillis * speed / 1000.0).setScale(1, RoundingMode.HALF_UP).doubleValue();
    }

    private static void await(BooleanSupplier condition, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out waiting for " + what);
            }
            WorkerProcess.sleep(5);
        }
    }
}
