package dev.fenced.lab;

import dev.fenced.cli.UsageException;
import dev.fenced.cli.Connections;
import com.fasterxml.jackson.databind.JsonNode;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.embedded.EmbeddedPostgresServer;
import dev.fenced.embedded.EmbeddedRedis;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.GatewayRefund;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.redis.LeaseSnapshot;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.RefundSummary;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * The article's worked example, for real, under one {@link Mechanism}: worker A (token 33) is
 * frozen with SIGSTOP when it reaches the stalled refund; its lease expires; worker B (token 34),
 * handed the job by "the queue", takes over; A is resumed with SIGCONT. What the gateway and the
 * database then hold is the measurement. Every time is the article's divided by the speed.
 */
final class Scenario {
    static final String MERCHANT = "m_4471";
    private static final Duration TIMEOUT = Duration.ofMinutes(5);
    private static final Set<String> MILESTONES = Set.of("acquired", "busy", "checked", "breakpoint", "violation", "lease-lost",
            "released", "result", "error", "failed");

    /** How many refunds and their total; the article's are 1,200 and 84,300.00 EUR, stalled at r_815. */
    record Story(int refunds, BigDecimal total) {
        static final Story ARTICLE = new Story(1200, new BigDecimal("84300.00"));

        /** r_815 in the article's story; the same fraction of the way through a smaller one. */
        String stalledRefund() {
            int index = (int) Math.max(1, Math.min(refunds, Math.round(refunds * 815.0 / 1200)));
            return RefundSeeder.refundId(index);
        }
    }

    record Entry(long atMillis, String worker, String event, String refund, long token, String detail) {
    }

    /** The servers scenarios run on: embedded ones unless URLs are given. */
    static final class Servers implements AutoCloseable {
        final String redisUrl;
        final String dbUrl;
        final HikariDataSource db;
        final RedisLeaseStore leases;
        private final EmbeddedRedis redis;
        private final EmbeddedPostgresServer postgres;

        private Servers(EmbeddedRedis redis, EmbeddedPostgresServer postgres, String redisUrl, String dbUrl) {
            this.redis = redis;
            this.postgres = postgres;
            this.redisUrl = redisUrl;
            this.dbUrl = dbUrl;
            HikariDataSource opened = null;
            try {
                opened = Connections.database(dbUrl, 4);
                this.leases = Connections.leases(redisUrl, opened, "scenario");
                this.db = opened;
            } catch (RuntimeException e) {
                if (opened != null) {
                    opened.close();
                }
                stopEmbedded();
                throw e;
            }
        }

        static Servers start(String redisUrl, String dbUrl, PrintStream progress) {
            EmbeddedRedis redis = null;
            EmbeddedPostgresServer postgres = null;
            if (redisUrl == null) {
                redis = EmbeddedRedis.start();
                say(progress, "started an embedded redis-server on port " + redis.port());
            }
            if (dbUrl == null) {
                try {
                    postgres = EmbeddedPostgresServer.start();
                } catch (RuntimeException e) {
                    if (redis != null) {
                        redis.close();
                    }
                    throw e;
                }
                say(progress, "started an embedded PostgreSQL");
            }
            return new Servers(redis, postgres, redis != null ? redis.uri() : redisUrl, postgres != null ? postgres.jdbcUrl() : dbUrl);
        }

        private static void say(PrintStream progress, String what) {
            if (progress != null) {
                progress.println("  " + what);
            }
        }

        /**
         * Forgets the previous run of the story: its refunds and the merchant's lease and counter.
         * Only on embedded servers, which nobody else uses; on servers of the user's own, the
         * merchant must be fresh.
         */
        void resetForNextRun(String resource) {
            if (redis == null || postgres == null) {
                return;
            }
            try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("DELETE FROM refund WHERE merchant = ?")) {
                s.setString(1, MERCHANT);
                s.executeUpdate();
            } catch (SQLException e) {
                throw new IllegalStateException("could not reset the refunds: " + e.getMessage(), e);
            }
            try (RedisLeaseStore leases = RedisLeaseStore.builder(redisUrl).build()) {
                leases.forget(resource);
            }
        }

        private void stopEmbedded() {
            if (postgres != null) {
                postgres.close();
            }
            if (redis != null) {
                redis.close();
            }
        }

        @Override
        public void close() {
            leases.close();
            db.close();
            stopEmbedded();
        }
    }

    private final double speed;
    private final Mechanism mechanism;
    private final Story story;
    private final PrintStream progress;
    private final List<Entry> notes = new CopyOnWriteArrayList<>();
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
        Entry entry = new Entry(System.currentTimeMillis(), "demo", what, null, token, null);
        notes.add(entry);
        if (progress != null) {
            progress.printf("  %7.2fs  %-4s %s%n", (entry.atMillis() - startMillis) / 1000.0, "demo", what);
        }
    }

    /** Plays the story once and reports what the gateway, the database and the workers saw. */
    Map<String, Object> run(Servers servers) {
        startMillis = System.currentTimeMillis();
        String resource = Merchants.resource(MERCHANT);
        servers.resetForNextRun(resource);
        LeaseSnapshot before = servers.leases.inspect(resource);
        if (before.counter() != null && before.counter() > 32) {
            throw new UsageException("the fence counter for " + resource + " is already at " + before.counter()
                    + "; the story needs a fresh Redis and database (run it without --redis-url and --db-url)");
        }
        try {
            RefundSeeder.seed(servers.db, MERCHANT, story.refunds(), story.total(), "EUR");
        } catch (IllegalStateException e) {
            throw new UsageException(e.getMessage() + "; the story needs a fresh database (run it without --db-url)");
        }
        servers.leases.raiseCounter(resource, 32);
        note("seeded " + MERCHANT + ": " + story.refunds() + " refunds, " + story.total() + " EUR; fence counter at 32", 0);
        Path ledger;
        try {
            ledger = Files.createTempDirectory("fenced-scenario").resolve("gateway-ledger.jsonl");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(scaled(Duration.ofMillis(20)))
                .idempotency(mechanism.idempotency()).ledgerFile(ledger).build())) {
            return play(servers, resource, gateway);
        }
    }

    private Map<String, Object> play(Servers servers, String resource, PaymentGateway gateway) {
        String stalled = story.stalledRefund();
        Duration ttl = scaled(mechanism.articleTtl());
        Map<String, String> env = Map.of("FENCED_REDIS_URL", servers.redisUrl, "FENCED_DB_URL", servers.dbUrl,
                "FENCED_GATEWAY_URL", gateway.url());
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
            a.awaitEvent(e -> type(e, "breakpoint"), TIMEOUT, "the breakpoint at " + stalled);
            a.signal("STOP");
            await(a::isStopped, Duration.ofSeconds(10), "worker A to stop");
            pausedAt = System.currentTimeMillis();
            long tokenA = a.firstEvent(e -> type(e, "acquired")).map(e -> e.get("token").asLong()).orElse(0L);
            note("SIGSTOP worker A at " + mechanism.pausePhase() + " " + stalled + ": the whole JVM, renewal thread included, is frozen", tokenA);
            a.writeLine("continue"); // read only when A runs again

            try (WorkerProcess b = WorkerProcess.start("B", argsB, env)) {
                await(() -> servers.leases.inspect(resource).holder() == null, TIMEOUT, "A's lease to expire");
                note("Redis expired A's lease " + resource, tokenA);
                WorkerProcess.sleep(scaled(Duration.ofSeconds(1)).toMillis());
                note("the queue redelivers the job to worker B (process " + b.pid() + ")", 0);
                b.writeLine("go");
                JsonNode acquiredB = b.awaitEvent(e -> type(e, "acquired"), TIMEOUT, "its lease");
                b.awaitEvent(e -> (type(e, "confirmed") || type(e, "failed")) && stalled.equals(text(e, "refund")), TIMEOUT,
                        "its confirm of " + stalled);
                long resumeAt = acquiredB.get("at").asLong() + scaled(Duration.ofSeconds(3)).toMillis();
                await(() -> System.currentTimeMillis() >= resumeAt, TIMEOUT, "the resume time");
                a.signal("CONT");
                resumedAt = System.currentTimeMillis();
                note("SIGCONT worker A: it wakes up believing it still holds the lease", tokenA);
                int exitA = a.awaitExit(TIMEOUT);
                int exitB = b.awaitExit(TIMEOUT);
                note("workers exited: A with " + exitA + ", B with " + exitB, 0);
                return report(servers.db, gateway.ledger(), a, b, exitA, exitB, acquiredB.get("at").asLong(), pausedAt, resumedAt);
            }
        }
    }

    private Map<String, Object> report(HikariDataSource db, List<GatewayRefund> ledger, WorkerProcess a, WorkerProcess b,
                                       int exitA, int exitB, long bAcquiredAt, long pausedAt, long resumedAt) {
        String stalled = story.stalledRefund();
        List<GatewayRefund> refunds = ledger.stream().filter(r -> r.merchant().equals(MERCHANT)).toList();
        long unique = refunds.stream().map(GatewayRefund::reference).distinct().count();
        BigDecimal total = refunds.stream().map(GatewayRefund::amount).reduce(BigDecimal.ZERO, BigDecimal::add).setScale(2);
        List<GatewayRefund> stalledRefunds = refunds.stream().filter(r -> r.reference().equals(stalled)).toList();
        // A write from A that the database accepted after B held the lease is a stale write.
        List<JsonNode> staleWrites = a.events().stream()
                .filter(e -> (type(e, "claimed") || type(e, "confirmed")) && e.get("at").asLong() > bAcquiredAt)
                .toList();
        Map<String, Long> rows = rowsByState(db, MERCHANT);
        long notSent = rows.entrySet().stream().filter(e -> !e.getKey().equals("sent")).mapToLong(Map.Entry::getValue).sum();
        long missingAtGateway = story.refunds() - unique;
        long settledAt = rows.getOrDefault("sent", 0L) == story.refunds()
                ? lastResultAt(a, b) - startMillis : -1;

        Map<String, Object> out = new LinkedHashMap<>();
        out.put("mechanism", mechanism.key());
        out.put("label", mechanism.label());
        out.put("fencing", mechanism.fencing());
        out.put("speed", speed);
        out.put("refunds", refunds.size());
        out.put("uniqueReferences", unique);
        out.put("totalAmount", total.toPlainString());
        out.put("duplicates", refunds.size() - unique);
        out.put("r815", Map.of("refunds", stalledRefunds.size(), "amount",
                stalledRefunds.stream().map(GatewayRefund::amount).reduce(BigDecimal.ZERO, BigDecimal::add).setScale(2).toPlainString()));
        out.put("staleWritesAccepted", (long) staleWrites.size());
        out.put("lostOrStuck", Math.max(notSent, missingAtGateway));
        out.put("settledArticleSeconds", settledAt < 0 ? null : articleSeconds(settledAt));
        out.put("workerA", worker(a, exitA, staleWrites.size()));
        out.put("workerB", worker(b, exitB, 0));
        out.put("rowsByState", rows);
        out.put("pausedAtMs", pausedAt - startMillis);
        out.put("resumedAtMs", resumedAt - startMillis);
        out.put("staleWrites", staleWrites.stream().map(e -> Map.of("elapsedMs", e.get("at").asLong() - startMillis,
                "refund", text(e, "refund"), "event", text(e, "type"))).toList());
        Map<String, Long> perReference = refunds.stream().collect(Collectors.groupingBy(GatewayRefund::reference, Collectors.counting()));
        out.put("duplicateRefunds", refunds.stream().filter(r -> perReference.get(r.reference()) > 1)
                .map(r -> Map.of("elapsedMs", r.createdAt() - startMillis, "refund", r.reference(), "gatewayId", r.id())).toList());
        out.put("timeline", timeline(a, b));
        return out;
    }

    /** Kills a holder with SIGKILL and measures how long the merchant stays blocked: the outage a TTL costs. */
    double measureCrashOutageArticleSeconds(Servers servers) {
        String resource = Merchants.resource(MERCHANT);
        servers.resetForNextRun(resource);
        RefundSeeder.seed(servers.db, MERCHANT, story.refunds(), story.total(), "EUR");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(scaled(Duration.ofMillis(20)))
                .idempotency(mechanism.idempotency()).build())) {
            Map<String, String> env = Map.of("FENCED_REDIS_URL", servers.redisUrl, "FENCED_DB_URL", servers.dbUrl,
                    "FENCED_GATEWAY_URL", gateway.url());
            List<String> args = new ArrayList<>(List.of("lab-settle", "--merchant", MERCHANT, "--events", "--name", "crashing",
                    "--ttl", scaled(mechanism.articleTtl()).toMillis() + "ms"));
            args.addAll(mechanism.workerFlags());
            try (WorkerProcess worker = WorkerProcess.start("crashing", args, env)) {
                worker.awaitEvent(e -> type(e, "claimed"), TIMEOUT, "its first claim");
                worker.signal("KILL");
                long killedAt = System.nanoTime();
                worker.awaitExit(Duration.ofSeconds(30));
                await(() -> servers.leases.inspect(resource).holder() == null, Duration.ofMinutes(10), "the dead holder's lease to expire");
                return articleSeconds((System.nanoTime() - killedAt) / 1_000_000);
            }
        }
    }

    private double articleSeconds(long realMillis) {
        return BigDecimal.valueOf(realMillis * speed / 1000.0).setScale(1, RoundingMode.HALF_UP).doubleValue();
    }

    private static long lastResultAt(WorkerProcess a, WorkerProcess b) {
        long last = 0;
        for (WorkerProcess worker : List.of(a, b)) {
            for (JsonNode e : worker.events()) {
                if (type(e, "confirmed") || type(e, "result")) {
                    last = Math.max(last, e.get("at").asLong());
                }
            }
        }
        return last;
    }

    private static Map<String, Object> worker(WorkerProcess worker, int exit, long staleWrites) {
        Map<String, Object> out = new LinkedHashMap<>();
        JsonNode result = worker.firstEvent(e -> type(e, "result")).orElse(null);
        out.put("token", result == null ? 0 : result.get("token").asLong());
        out.put("outcome", result == null ? "NoResult" : camel(result.get("result").asText()));
        if (result != null && result.hasNonNull("refusedAt")) {
            out.put("storedFence", result.get("storedFence").asLong());
            out.put("refusedAt", result.get("refusedAt").asText());
        }
        out.put("confirmed", worker.events().stream().filter(e -> type(e, "confirmed")).count());
        out.put("staleWritesAccepted", staleWrites);
        out.put("exitCode", exit);
        return out;
    }

    private List<Map<String, Object>> timeline(WorkerProcess a, WorkerProcess b) {
        String stalled = story.stalledRefund();
        List<Entry> entries = new ArrayList<>(notes);
        for (WorkerProcess worker : List.of(a, b)) {
            boolean firstClaim = true;
            for (JsonNode e : worker.events()) {
                String type = e.get("type").asText();
                boolean keep = MILESTONES.contains(type) || stalled.equals(text(e, "refund")) || (type.equals("claimed") && firstClaim);
                if (type.equals("claimed")) {
                    firstClaim = false;
                }
                if (keep) {
                    String detail = type.equals("result") ? e.get("result").asText() + ", " + e.get("sent").asInt() + " confirmed"
                            : text(e, "detail");
                    entries.add(new Entry(e.get("at").asLong(), worker.name(), type, text(e, "refund"), e.path("token").asLong(), detail));
                }
            }
        }
        entries.sort(Comparator.comparingLong(Entry::atMillis));
        List<Map<String, Object>> out = new ArrayList<>();
        for (Entry entry : entries) {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("elapsedMs", entry.atMillis() - startMillis);
            line.put("worker", entry.worker());
            line.put("event", entry.event());
            line.put("refund", entry.refund());
            line.put("token", entry.token());
            line.put("detail", entry.detail());
            out.add(line);
        }
        return out;
    }

    /** The merchant's refunds counted by state. */
    static Map<String, Long> rowsByState(javax.sql.DataSource db, String merchant) {
        return RefundSummary.of(db, merchant).rowsByState();
    }

    static String camel(String result) {
        StringBuilder out = new StringBuilder();
        for (String part : result.toLowerCase(java.util.Locale.ROOT).split("_")) {
            out.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
        }
        return out.toString();
    }

    private static boolean type(JsonNode event, String type) {
        return type.equals(event.path("type").asText());
    }

    private static String text(JsonNode event, String field) {
        JsonNode node = event.get(field);
        return node == null || node.isNull() ? null : node.asText();
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
