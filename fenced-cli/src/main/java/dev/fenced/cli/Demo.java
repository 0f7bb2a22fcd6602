package dev.fenced.cli;

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
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
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

/**
 * The article's worked example, for real: worker A (token 33) is frozen with SIGSTOP right after it
 * claims r_815; its lease expires; worker B (token 34) takes over; A is resumed with SIGCONT and its
 * confirm of r_815 is refused by the database. Every time is the article's divided by the speed.
 */
final class Demo {
    static final String MERCHANT = "m_4471";
    static final int REFUNDS = 1200;
    static final BigDecimal TOTAL = new BigDecimal("84300.00");
    static final String STALLED_REFUND = "r_815";
    private static final Duration TIMEOUT = Duration.ofMinutes(5);
    private static final Set<String> MILESTONES = Set.of("acquired", "busy", "checked", "breakpoint", "violation", "lease-lost",
            "released", "result", "error", "failed");

    record Options(double speed, boolean fencing, String redisUrl, String dbUrl, PrintStream progress) {
    }

    record Entry(long atMillis, String worker, String event, String refund, long token, String detail) {
    }

    private final Options options;
    private final List<Entry> timeline = new CopyOnWriteArrayList<>();
    private long startMillis;

    Demo(Options options) {
        if (!(options.speed() >= 1 && options.speed() <= 100)) {
            throw new UsageException("--speed must be between 1 and 100, got " + options.speed());
        }
        this.options = options;
    }

    private Duration scaled(Duration articleTime) {
        return Duration.ofMillis(Math.max(1, Math.round(articleTime.toMillis() / options.speed())));
    }

    private void note(String what, long token) {
        Entry entry = new Entry(System.currentTimeMillis(), "demo", what, null, token, null);
        timeline.add(entry);
        if (options.progress() != null) {
            options.progress().printf("  %7.2fs  %-4s %s%n", (entry.atMillis() - startMillis) / 1000.0, "demo", what);
        }
    }

    Map<String, Object> run() {
        startMillis = System.currentTimeMillis();
        String resource = Merchants.resource(MERCHANT);
        EmbeddedRedis redis = null;
        EmbeddedPostgresServer postgres = null;
        try {
            if (options.redisUrl() == null) {
                redis = EmbeddedRedis.start();
                note("started an embedded redis-server on port " + redis.port(), 0);
            }
            if (options.dbUrl() == null) {
                postgres = EmbeddedPostgresServer.start();
                note("started an embedded PostgreSQL", 0);
            }
            String redisUrl = redis != null ? redis.uri() : options.redisUrl();
            String dbUrl = postgres != null ? postgres.jdbcUrl() : options.dbUrl();
            Path ledger = Files.createTempDirectory("fenced-demo").resolve("gateway-ledger.jsonl");
            try (HikariDataSource db = Connections.database(dbUrl, 4);
                 RedisLeaseStore leases = Connections.leases(redisUrl, db, "demo");
                 PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder()
                         .latency(scaled(Duration.ofMillis(20))).ledgerFile(ledger).build())) {
                return play(resource, redisUrl, dbUrl, db, leases, gateway);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (postgres != null) {
                postgres.close();
            }
            if (redis != null) {
                redis.close();
            }
        }
    }

    private Map<String, Object> play(String resource, String redisUrl, String dbUrl, HikariDataSource db, RedisLeaseStore leases,
                                     PaymentGateway gateway) {
        LeaseSnapshot before = leases.inspect(resource);
        if (before.counter() != null && before.counter() > 32) {
            throw new UsageException("the fence counter for " + resource + " is already at " + before.counter()
                    + "; the demo needs a fresh Redis and database (run it without --redis-url and --db-url)");
        }
        try {
            RefundSeeder.seed(db, MERCHANT, REFUNDS, TOTAL, "EUR");
        } catch (IllegalStateException e) {
            throw new UsageException(e.getMessage() + "; the demo needs a fresh database (run it without --db-url)");
        }
        leases.raiseCounter(resource, 32);
        note("seeded " + MERCHANT + ": " + REFUNDS + " refunds, " + TOTAL + " EUR; fence counter at 32", 0);

        Duration ttl = scaled(Duration.ofSeconds(30));
        Map<String, String> env = Map.of("FENCED_REDIS_URL", redisUrl, "FENCED_DB_URL", dbUrl, "FENCED_GATEWAY_URL", gateway.url());
        List<String> common = new ArrayList<>(List.of("settle", "--merchant", MERCHANT, "--ttl", ttl.toMillis() + "ms", "--events"));
        if (!options.fencing()) {
            common.add("--no-fence");
        }
        List<String> argsA = new ArrayList<>(common);
        argsA.addAll(List.of("--name", "A", "--pause-at", "after-claim:" + STALLED_REFUND));
        List<String> argsB = new ArrayList<>(common);
        argsB.addAll(List.of("--name", "B", "--start-on-stdin"));

        try (WorkerProcess a = WorkerProcess.start("A", argsA, env)) {
            note("worker A started as process " + a.pid() + " (lease TTL " + ttl.toMillis() + " ms)", 0);
            a.awaitEvent(e -> type(e, "breakpoint"), TIMEOUT, "its claim of " + STALLED_REFUND);
            a.signal("STOP");
            await(a::isStopped, Duration.ofSeconds(10), "worker A to stop");
            long tokenA = a.firstEvent(e -> type(e, "acquired")).map(e -> e.get("token").asLong()).orElse(0L);
            note("SIGSTOP worker A right after it claimed " + STALLED_REFUND + ": the whole JVM, renewal thread included, is frozen", tokenA);
            a.writeLine("continue"); // read only when A runs again

            try (WorkerProcess b = WorkerProcess.start("B", argsB, env)) {
                await(() -> leases.inspect(resource).holder() == null, TIMEOUT, "A's lease to expire");
                note("Redis expired A's lease " + resource, tokenA);
                WorkerProcess.sleep(scaled(Duration.ofSeconds(1)).toMillis());
                note("the queue redelivers the job to worker B (process " + b.pid() + ")", 0);
                b.writeLine("go");
                JsonNode acquiredB = b.awaitEvent(e -> type(e, "acquired"), TIMEOUT, "its lease");
                b.awaitEvent(e -> type(e, "confirmed") && STALLED_REFUND.equals(text(e, "refund")), TIMEOUT, "its confirm of " + STALLED_REFUND);
                long resumeAt = acquiredB.get("at").asLong() + scaled(Duration.ofSeconds(3)).toMillis();
                await(() -> System.currentTimeMillis() >= resumeAt, TIMEOUT, "the resume time");
                a.signal("CONT");
                note("SIGCONT worker A: it wakes up believing it still holds the lease", tokenA);
                int exitA = a.awaitExit(TIMEOUT);
                int exitB = b.awaitExit(TIMEOUT);
                note("workers exited: A with " + exitA + ", B with " + exitB, 0);
                return report(db, gateway.ledger(), a, b, exitA, exitB, acquiredB.get("at").asLong());
            }
        }
    }

    private Map<String, Object> report(HikariDataSource db, List<GatewayRefund> ledger, WorkerProcess a, WorkerProcess b,
                                       int exitA, int exitB, long bAcquiredAt) {
        List<GatewayRefund> refunds = ledger.stream().filter(r -> r.merchant().equals(MERCHANT)).toList();
        long unique = refunds.stream().map(GatewayRefund::reference).distinct().count();
        BigDecimal total = refunds.stream().map(GatewayRefund::amount).reduce(BigDecimal.ZERO, BigDecimal::add).setScale(2);
        List<GatewayRefund> r815 = refunds.stream().filter(r -> r.reference().equals(STALLED_REFUND)).toList();
        // A write from A that the database accepted after B held the lease is a stale write.
        long staleWrites = a.events().stream()
                .filter(e -> (type(e, "claimed") || type(e, "confirmed")) && e.get("at").asLong() > bAcquiredAt)
                .count();

        Map<String, Object> out = new LinkedHashMap<>();
        out.put("fencing", options.fencing());
        out.put("speed", options.speed());
        out.put("refunds", refunds.size());
        out.put("uniqueReferences", unique);
        out.put("totalAmount", total.toPlainString());
        out.put("duplicates", refunds.size() - unique);
        out.put("r815", Map.of("refunds", r815.size(),
                "amount", r815.stream().map(GatewayRefund::amount).reduce(BigDecimal.ZERO, BigDecimal::add).setScale(2).toPlainString()));
        out.put("staleWritesAccepted", staleWrites);
        out.put("workerA", worker(a, exitA, staleWrites));
        out.put("workerB", worker(b, exitB, 0));
        out.put("rowsByState", rowsByState(db));
        out.put("timeline", timeline(a, b));
        return out;
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
        List<Entry> entries = new ArrayList<>(timeline);
        for (WorkerProcess worker : List.of(a, b)) {
            boolean firstClaim = true;
            for (JsonNode e : worker.events()) {
                String type = e.get("type").asText();
                boolean stalled = STALLED_REFUND.equals(text(e, "refund"));
                boolean keep = MILESTONES.contains(type) || stalled || (type.equals("claimed") && firstClaim);
                if (type.equals("claimed")) {
                    firstClaim = false;
                }
                if (keep) {
                    String detail = type.equals("result") ? e.get("result").asText() + ", " + e.get("sent").asInt() + " confirmed"
                            : text(e, "detail");
                    entries.add(new Entry(e.get("at").asLong(), worker.name(), type, text(e, "refund"),
                            e.path("token").asLong(), detail));
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

    private static Map<String, Long> rowsByState(HikariDataSource db) {
        Map<String, Long> out = new TreeMap<>();
        try (Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT state, COUNT(*) FROM refund WHERE merchant = ? GROUP BY state")) {
            s.setString(1, MERCHANT);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getLong(2));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not count refunds by state: " + e.getMessage(), e);
        }
        return out;
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
