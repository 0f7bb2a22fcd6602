package dev.fenced.lab;

import dev.fenced.cli.UsageException;
import dev.fenced.cli.Connections;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.embedded.EmbeddedPostgresServer;
import dev.fenced.embedded.EmbeddedRedisFailoverGroup;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.GatewayRefund;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.settlement.RefundSeeder;
import io.lettuce.core.RedisClient;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/**
 * A Jepsen-style run: merchants settled by worker processes that take jobs from a queue with a
 * visibility timeout, while faults drawn from a seeded schedule strike; then a drain without
 * faults, and a check of exactly-once from the gateway's ledger, the database and the histories.
 */
final class ChaosHarness {
    enum Fault {
        PAUSE, KILL, REDIS_RESTART, FLUSHALL, FAILOVER, DB_KILL, GATEWAY, GATEWAY_OUTAGE, GATEWAY_RESTART, KEY_REUSE;

        /** Faults that strike all along rather than at drawn moments. */
        boolean standing() {
            return this == GATEWAY || this == KEY_REUSE;
        }

        static Set<Fault> parse(List<String> names) {
            Set<Fault> out = EnumSet.noneOf(Fault.class);
            for (String name : names) {
                try {
                    out.add(Fault.valueOf(name.trim().toUpperCase(Locale.ROOT).replace('-', '_')));
                } catch (IllegalArgumentException e) {
                    throw new UsageException("unknown fault '" + name + "'; use pause, kill, redis-restart, flushall, failover, db-kill, gateway,"
                            + " gateway-outage, gateway-restart, key-reuse");
                }
            }
            return out;
        }

        String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    record Settings(int merchants, int refunds, int workers, int concurrency, Duration gatewayLatency, Duration duration,
                    Duration ttl, long seed, Set<Fault> faults, boolean fencing, boolean dbTokens, Path history) {
    }

    private static final Duration DRAIN_LIMIT = Duration.ofMinutes(3);
    /** A job the gateway turned away waits this long before it is handed out again, as a queue's delayed redelivery would. */
    private static final long GATEWAY_RETRY_DELAY_MS = 1_000;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Settings settings;
    private final PrintStream log;
    private final Random random;
    private final Deque<String> queue = new ArrayDeque<>();
    private final Map<String, String> holderOfJob = new HashMap<>();
    private final Map<String, Long> handedAt = new HashMap<>();
    private final Map<String, Long> notBefore = new HashMap<>();
    private final Set<String> done = ConcurrentHashMap.newKeySet();
    private final Map<String, Slot> slots = new LinkedHashMap<>();
    private final List<JsonNode> history = new CopyOnWriteArrayList<>();
    private final Map<Fault, Integer> injected = new EnumMap<>(Fault.class);
    private final List<JsonNode> results = new CopyOnWriteArrayList<>();
    private int workerNumber;
    private Map<String, String> env;
    private GatewayConfig gatewayConfig;
    private PaymentGateway gateway;
    private SecondDeployment secondDeployment;

    private static final class Slot {
        final WorkerProcess process;
        final java.util.concurrent.atomic.AtomicInteger capacity = new java.util.concurrent.atomic.AtomicInteger();
        long pausedUntil;

        Slot(WorkerProcess process) {
            this.process = process;
        }

        boolean paused() {
            return pausedUntil > 0;
        }
    }

    ChaosHarness(Settings settings, PrintStream log) {
        this.settings = settings;
        this.log = log;
        this.random = new Random(settings.seed());
    }

    private void say(String text) {
        if (log != null) {
            log.println("chaos: " + text);
        }
    }

    Map<String, Object> run() throws Exception {
        say("seed " + settings.seed() + " (replay with --seed " + settings.seed() + "), fencing " + (settings.fencing() ? "on" : "OFF"));
        Path ledger = Files.createTempDirectory("fenced-chaos").resolve("gateway-ledger.jsonl");
        try (EmbeddedRedisFailoverGroup redis = EmbeddedRedisFailoverGroup.start(); EmbeddedPostgresServer postgres = EmbeddedPostgresServer.start();
             HikariDataSource db = Connections.database(postgres.jdbcUrl(), 3)) {
            gateway = PaymentGateway.start(gatewayConfig(0, ledger));
            gatewayConfig = gatewayConfig(gateway.port(), ledger); // a restart comes back on the same port, with the same ledger
            try {
                return run(redis, postgres, db);
            } finally {
                if (secondDeployment != null) {
                    secondDeployment.close();
                }
                gateway.close();
                Files.deleteIfExists(ledger);
                Files.deleteIfExists(ledger.getParent());
            }
        }
    }

    private Map<String, Object> run(EmbeddedRedisFailoverGroup redis, EmbeddedPostgresServer postgres, HikariDataSource db) throws Exception {
        List<String> merchants = seed(db);
        queue.addAll(merchants);
        env = Map.of("FENCED_REDIS_URL", redis.sentinelUri(), "FENCED_DB_URL", postgres.jdbcUrl(), "FENCED_GATEWAY_URL", gateway.url());
        if (settings.faults().contains(Fault.KEY_REUSE)) {
            secondDeployment = SecondDeployment.start(postgres, env, settings, merchants, history::add, this::say);
            injected.merge(Fault.KEY_REUSE, 1, Integer::sum);
        }
        for (int i = 0; i < settings.workers(); i++) {
            startWorker();
        }
        long start = System.currentTimeMillis();
        long faultsEnd = start + settings.duration().toMillis();
        long nextFault = start + 500;
        while (System.currentTimeMillis() < faultsEnd) {
            dispatch();
            restartStoppedNode(redis, false);
            if (System.currentTimeMillis() >= nextFault) {
                strike(redis, postgres.jdbcUrl());
                nextFault = System.currentTimeMillis() + 300 + random.nextInt(900);
            }
            WorkerProcess.sleep(10);
        }
        say("faults stop; draining");
        restartStoppedNode(redis, true);
        gateway.faultsEnabled(false);
        awaitGateway();
        for (Slot slot : slots.values()) {
            resume(slot);
        }
        boolean drained = drain(db, merchants);
        stopWorkers();
        Map<String, Object> report = check(db, gateway.ledger(), merchants, drained);
        report.put("seconds", (System.currentTimeMillis() - start) / 1000.0);
        writeHistory();
        return report;
    }

    /** Waits for the end of an outage the schedule started, so that the drain runs against a listening gateway. */
    private void awaitGateway() {
        long deadline = System.currentTimeMillis() + 30_000;
        while (!gateway.listening() && System.currentTimeMillis() < deadline) {
            WorkerProcess.sleep(20);
        }
    }

    private GatewayConfig gatewayConfig(int port, Path ledger) {
        GatewayConfig.Builder config = GatewayConfig.builder().port(port).ledgerFile(ledger).latency(settings.gatewayLatency())
                .seed(settings.seed());
        if (settings.faults().contains(Fault.GATEWAY)) {
            config.failBefore(0.04).failAfter(0.04).slow(0.01, Duration.ofSeconds(7)); // the client gives up after 5 s
        }
        return config.build();
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

    private void startWorker() {
        String name = "w" + (++workerNumber);
        List<String> args = new ArrayList<>(List.of("chaos-worker", "--name", name, "--ttl", settings.ttl().toMillis() + "ms", "--jobs", "3",
                "--concurrency", Integer.toString(settings.concurrency())));
        if (!settings.fencing()) {
            args.add("--no-fence");
        }
        if (settings.dbTokens()) {
            args.add("--db-tokens");
        }
        Slot[] holder = new Slot[1];
        WorkerProcess process = WorkerProcess.start(name, args, env, event -> onEvent(holder[0], event));
        Slot slot = new Slot(process);
        holder[0] = slot;
        synchronized (this) {
            slots.put(name, slot);
        }
    }

    private void onEvent(Slot slot, JsonNode event) {
        String type = event.path("type").asText();
        if (type.equals("ready")) {
            if (slot != null) {
                slot.capacity.incrementAndGet();
            }
            return;
        }
        history.add(event);
        synchronized (this) {
            String merchant = event.path("merchant").asText();
            if (event.path("worker").asText().equals(holderOfJob.get(merchant))) {
                handedAt.put(merchant, System.currentTimeMillis()); // progress extends the job's visibility timeout
            }
        }
        if (type.equals("result")) {
            results.add(event);
            String merchant = event.path("merchant").asText();
            String worker = event.path("worker").asText();
            synchronized (this) {
                if (event.path("result").asText().equals("COMPLETED")) {
                    done.add(merchant);
                    queue.remove(merchant);
                }
                if (worker.equals(holderOfJob.get(merchant))) {
                    holderOfJob.remove(merchant);
                    handedAt.remove(merchant);
                    if (event.path("result").asText().equals("GATEWAY_UNAVAILABLE")) {
                        notBefore.put(merchant, System.currentTimeMillis() + GATEWAY_RETRY_DELAY_MS);
                    }
                    if (!done.contains(merchant) && !queue.contains(merchant)) {
                        queue.addLast(merchant);
                    }
                }
            }
        }
    }

    /** Hands queued jobs to idle workers, requeues jobs past their visibility timeout, replaces dead workers. */
    private synchronized void dispatch() {
        long now = System.currentTimeMillis();
        long visibility = settings.ttl().toMillis(); // a holder silent for one TTL has lost its job
        for (Map.Entry<String, Long> job : new ArrayList<>(handedAt.entrySet())) {
            if (now - job.getValue() > visibility && !done.contains(job.getKey()) && !queue.contains(job.getKey())) {
                queue.addLast(job.getKey()); // the holder went silent: another worker gets the job, as a queue would do
                handedAt.put(job.getKey(), Long.MAX_VALUE / 2);
            }
        }
        if (secondDeployment != null) {
            secondDeployment.dispatch();
        }
        for (Slot slot : new ArrayList<>(slots.values())) {
            if (slot.paused() && now >= slot.pausedUntil) {
                resume(slot);
            }
            if (!slot.process.isAlive()) {
                slots.remove(slot.process.name());
                startWorker();
                continue;
            }
            while (slot.capacity.get() > 0 && !slot.paused() && !queue.isEmpty()) {
                String merchant = nextReady(now);
                if (merchant == null) {
                    break;
                }
                slot.capacity.decrementAndGet();
                holderOfJob.put(merchant, slot.process.name());
                handedAt.put(merchant, now);
                try {
                    slot.process.writeLine(merchant);
                } catch (UncheckedIOException gone) {
                    queue.addFirst(merchant);
                    break;
                }
            }
        }
    }

    /** The first queued job whose delay is over, or null. */
    private String nextReady(long now) {
        for (String merchant : queue) {
            if (notBefore.getOrDefault(merchant, 0L) <= now) {
                queue.remove(merchant);
                notBefore.remove(merchant);
                return merchant;
            }
        }
        return null;
    }

    private int stoppedPort;
    private long restartStoppedAt;

    /** Brings back the primary a failover took down, empty: the Sentinel makes it a replica. */
    private void restartStoppedNode(EmbeddedRedisFailoverGroup redis, boolean now) {
        if (stoppedPort != 0 && (now || System.currentTimeMillis() >= restartStoppedAt)) {
            redis.startNode(stoppedPort);
            stoppedPort = 0;
        }
    }

    private static int primaryPort(EmbeddedRedisFailoverGroup redis) {
        try (RedisClient client = RedisClient.create("redis://127.0.0.1:" + redis.sentinelPort());
             var sentinel = client.connectSentinel()) {
            return ((java.net.InetSocketAddress) sentinel.sync().getMasterAddrByName(EmbeddedRedisFailoverGroup.MASTER_NAME)).getPort();
        }
    }

    private void strike(EmbeddedRedisFailoverGroup redis, String dbUrl) {
        List<Fault> enabled = new ArrayList<>(settings.faults());
        enabled.removeIf(Fault::standing);
        if (enabled.isEmpty()) {
            return;
        }
        Fault fault = enabled.get(random.nextInt(enabled.size()));
        List<Slot> live;
        synchronized (this) {
            live = slots.values().stream().filter(s -> s.process.isAlive() && !s.paused()).toList();
            List<Slot> busy = live.stream().filter(s -> holderOfJob.containsValue(s.process.name())).toList();
            if (!busy.isEmpty()) {
                live = busy; // a fault on a worker holding a job is the one that can do harm
            }
        }
        switch (fault) {
            case PAUSE -> {
                if (live.isEmpty()) {
                    return;
                }
                Slot slot = live.get(random.nextInt(live.size()));
                slot.process.signal("STOP");
                slot.pausedUntil = System.currentTimeMillis() + (long) (settings.ttl().toMillis() * (1.5 + random.nextDouble() * 2));
            }
            case KILL -> {
                if (live.isEmpty()) {
                    return;
                }
                live.get(random.nextInt(live.size())).process.signal("KILL");
            }
            case REDIS_RESTART, FLUSHALL, FAILOVER -> {
                if (stoppedPort != 0) {
                    return; // a failover is under way: one Redis fault at a time
                }
                int primary = primaryPort(redis);
                if (fault == Fault.FLUSHALL) {
                    try (RedisClient client = RedisClient.create("redis://127.0.0.1:" + primary); var connection = client.connect()) {
                        connection.sync().flushall();
                    }
                } else if (fault == Fault.REDIS_RESTART) {
                    redis.stopNode(primary);
                    redis.startNode(primary); // back before the Sentinel notices: empty, and the replica resyncs from it
                } else {
                    redis.stopNode(primary); // the Sentinel promotes the replica after about a second
                    stoppedPort = primary;
                    restartStoppedAt = System.currentTimeMillis() + 5_000;
                }
            }
            case DB_KILL -> terminateBackends(dbUrl);
            case GATEWAY_OUTAGE -> {
                if (!gateway.listening()) {
                    return;
                }
                gateway.outage(Duration.ofMillis(2_000 + random.nextInt(3_000))); // longer than a worker's retries
            }
            case GATEWAY_RESTART -> {
                if (!gateway.listening()) {
                    return;
                }
                gateway.close(); // in-flight answers are lost; the ledger on disk is what it comes back with
                gateway = PaymentGateway.start(gatewayConfig);
            }
            default -> throw new IllegalStateException("unhandled fault " + fault);
        }
        injected.merge(fault, 1, Integer::sum);
    }

    private static void terminateBackends(String dbUrl) {
        try (Connection c = java.sql.DriverManager.getConnection(dbUrl); Statement s = c.createStatement()) {
            s.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
                    + " AND datname = current_database() AND backend_type = 'client backend'");
        } catch (SQLException e) {
            throw new IllegalStateException("could not terminate database connections: " + e.getMessage(), e);
        }
    }

    private void resume(Slot slot) {
        if (slot.paused()) {
            slot.pausedUntil = 0;
            if (slot.process.isAlive()) {
                slot.process.signal("CONT");
            }
        }
    }

    /** Without faults: requeues every merchant not fully settled, until none is left pending or sending. */
    private boolean drain(HikariDataSource db, List<String> merchants) throws SQLException {
        long deadline = System.currentTimeMillis() + DRAIN_LIMIT.toMillis();
        long nextCheck = 0;
        while (System.currentTimeMillis() < deadline) {
            dispatch();
            if (System.currentTimeMillis() >= nextCheck) {
                nextCheck = System.currentTimeMillis() + 1_000;
                Map<String, Long> unsettled = unsettledByMerchant(db);
                boolean secondDone = secondDeployment == null || secondDeployment.drained();
                if (unsettled.isEmpty() && secondDone) {
                    return true;
                }
                synchronized (this) {
                    if (queue.isEmpty() && holderOfJob.isEmpty()) {
                        for (String merchant : unsettled.keySet()) {
                            done.remove(merchant);
                            queue.addLast(merchant);
                        }
                    }
                }
            }
            WorkerProcess.sleep(10);
        }
        return unsettledByMerchant(db).isEmpty() && (secondDeployment == null || secondDeployment.drained());
    }

    /** Merchants with refunds still pending or sending; failed ones are the checker's business, not the drain's. */
    static Map<String, Long> unsettledByMerchant(HikariDataSource db) throws SQLException {
        Map<String, Long> out = new LinkedHashMap<>();
        try (Connection c = db.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT merchant, COUNT(*) FROM refund WHERE state IN ('pending', 'sending') GROUP BY merchant")) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getLong(2));
            }
        }
        return out;
    }

    private void stopWorkers() {
        for (Slot slot : slots.values()) {
            slot.process.closeStdin();
        }
        for (Slot slot : slots.values()) {
            try {
                slot.process.awaitExit(Duration.ofSeconds(20));
            } catch (IllegalStateException stuck) {
                slot.process.close();
            }
        }
    }

    private Map<String, Object> check(HikariDataSource db, List<GatewayRefund> ledger, List<String> merchants, boolean drained)
            throws SQLException {
        List<GatewayCrossCheck.Row> rowList = new ArrayList<>(GatewayCrossCheck.rows(db));
        long reconcileDiscrepancies = GatewayCrossCheck.reconcile(db, gateway.url(), merchants);
        if (secondDeployment != null) {
            rowList.addAll(GatewayCrossCheck.rows(secondDeployment.db()));
            reconcileDiscrepancies += GatewayCrossCheck.reconcile(secondDeployment.db(), gateway.url(), secondDeployment.merchants());
        }
        Map<String, GatewayCrossCheck.Row> rows = rowList.stream().collect(Collectors.toMap(GatewayCrossCheck.Row::refundKey, r -> r));
        Map<String, Long> moneyChecks = GatewayCrossCheck.check(rowList, ledger);

        Map<String, List<JsonNode>> confirms = history.stream().filter(e -> e.path("type").asText().equals("confirmed"))
                .collect(Collectors.groupingBy(e -> e.path("merchant").asText() + "/" + e.path("refund").asText()));
        long confirmedTwice = confirms.values().stream().filter(l -> l.size() > 1).count();
        long confirmedByAnotherToken = confirms.entrySet().stream().filter(e -> {
            GatewayCrossCheck.Row row = rows.get(e.getKey());
            return row != null && e.getValue().stream().anyMatch(c -> c.path("token").asLong() != row.fence());
        }).count();

        long tokenOrder = 0;
        Map<String, List<JsonNode>> grants = history.stream().filter(e -> e.path("type").asText().equals("acquired"))
                .collect(Collectors.groupingBy(e -> e.path("merchant").asText()));
        for (List<JsonNode> list : grants.values()) {
            List<JsonNode> ordered = new ArrayList<>(list);
            ordered.sort(Comparator.comparingLong(e -> e.path("at").asLong()));
            for (int i = 1; i < ordered.size(); i++) {
                if (ordered.get(i).path("at").asLong() > ordered.get(i - 1).path("at").asLong()
                        && ordered.get(i).path("token").asLong() <= ordered.get(i - 1).path("token").asLong()) {
                    tokenOrder++;
                }
            }
        }
        // Redis-issued tokens can repeat after Redis loses data (a lagging replica promoted, a restart);
        // the fence still holds, and database-issued tokens are the cure: counted as violations only there.
        boolean redisDataLost = !settings.dbTokens() && (injected.getOrDefault(Fault.FAILOVER, 0) + injected.getOrDefault(Fault.REDIS_RESTART, 0)
                + injected.getOrDefault(Fault.FLUSHALL, 0)) > 0;
        long violations = moneyChecks.values().stream().mapToLong(Long::longValue).sum() + reconcileDiscrepancies + confirmedTwice
                + confirmedByAnotherToken + (redisDataLost ? 0 : tokenOrder);

        Map<String, Object> checks = new LinkedHashMap<>(moneyChecks);
        checks.put("discrepancies fenced reconcile reports", reconcileDiscrepancies);
        checks.put("refunds confirmed more than once", confirmedTwice);
        checks.put("refunds confirmed by a token other than the row's", confirmedByAnotherToken);
        checks.put(redisDataLost ? "grants whose token did not increase (Redis lost data: noted, not a violation)"
                : "grants whose token did not increase", tokenOrder);

        Map<String, Object> operations = new LinkedHashMap<>();
        for (String type : List.of("acquired", "busy", "claimed", "gateway", "confirmed", "skipped", "left", "gateway-down", "violation",
                "failed", "lease-lost", "error")) {
            operations.put(type, history.stream().filter(e -> e.path("type").asText().equals(type)).count());
        }
        Map<String, Object> faults = new LinkedHashMap<>();
        for (Fault fault : Fault.values()) {
            if (settings.faults().contains(fault)) {
                faults.put(fault.label(), fault == Fault.GATEWAY ? "per request: 4% before, 4% after, 1% slow" : injected.getOrDefault(fault, 0));
            }
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("seed", settings.seed());
        report.put("fencing", settings.fencing());
        report.put("tokens", settings.dbTokens() ? "database" : "redis");
        report.put("merchants", merchants.size());
        report.put("refunds", rows.size());
        report.put("workers", settings.workers());
        report.put("concurrency", settings.concurrency());
        report.put("gatewayLatencyMs", settings.gatewayLatency().toMillis());
        report.put("workerProcessesStarted", workerNumber);
        report.put("gatewayRefunds", ledger.size());
        report.put("drained", drained);
        report.put("faults", faults);
        report.put("operations", operations);
        report.put("checks", checks);
        report.put("violations", violations);
        report.put("verdict", verdict(violations));
        return report;
    }

    private String verdict(long violations) {
        if (settings.fencing()) {
            return violations == 0 ? "exactly once: no violation" : violations + " VIOLATIONS";
        }
        return violations > 0 ? "negative control: " + violations + " violations without the fence, as it must"
                : "negative control found no violation: this scenario proved nothing; run longer or with more pauses";
    }

    private void writeHistory() {
        if (settings.history() == null) {
            return;
        }
        try {
            List<String> lines = new ArrayList<>();
            for (JsonNode event : history) {
                lines.add(JSON.writeValueAsString(event));
            }
            Files.write(settings.history(), lines, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the history to " + settings.history(), e);
        }
    }

    @SuppressWarnings("unchecked")
    static String table(Map<String, Object> report) {
        StringBuilder out = new StringBuilder();
        out.append(String.format("fenced chaos: seed %s, fencing %s, tokens from %s, %s merchants, %s refunds, %s workers (%s processes started), %.0f s%n%n",
                report.get("seed"), (Boolean) report.get("fencing") ? "on" : "OFF", report.get("tokens"), report.get("merchants"),
                report.get("refunds"), report.get("workers"), report.get("workerProcessesStarted"), report.get("seconds")));
        out.append(String.format("%-16s %s%n", "fault", "injected"));
        ((Map<String, Object>) report.get("faults")).forEach((k, v) -> out.append(String.format("%-16s %s%n", k, v)));
        out.append(String.format("%n%-16s %s%n", "operation", "count"));
        ((Map<String, Object>) report.get("operations")).forEach((k, v) -> out.append(String.format("%-16s %s%n", k, v)));
        out.append(String.format("%n%-75s %s%n", "check", "violations"));
        ((Map<String, Object>) report.get("checks")).forEach((k, v) -> out.append(String.format("%-75s %s%n", k, v)));
        out.append(String.format("%n%s%n", report.get("verdict")));
        return out.toString();
    }
}
