package dev.fenced.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.fleet.Broker;
import dev.fenced.fleet.JobStream;
import dev.fenced.fleet.SettlementJobs;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.GatewayRefund;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.RefundSeeder;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ConsumerInfo;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The fleet: real {@code fenced worker} processes (each {@code --jobs 4 --concurrency 8}) fed by a
 * JetStream stream of their own, against the simulated gateway (25 ms) in this JVM. For 1, 2 and
 * 4 workers, the time from the first enqueue of 200 merchants × 100 refunds (workers started and
 * idle) until the last job is acked, against the limit min(refunds in flight / latency, the
 * database's commit rate measured in the same run); the broker's share of the workers' job time
 * (their own account, printed when SIGTERM drains them); each worker's live heap at full load
 * against idle, per in-flight refund; its resident set; and where the machine's CPU went. Every
 * refund of the run must be sent and at the gateway exactly once, or the bench fails.
 */
final class FleetThroughput {
    private static final Duration LATENCY = Duration.ofMillis(25);
    private static final int JOBS = 4;
    private static final int CONCURRENCY = 8;
    private static final int IN_FLIGHT_PER_WORKER = JOBS * CONCURRENCY;
    /** The heap phase settles merchants of 100 refunds, as the full run does, also in quick mode: long enough for jcmd. */
    private static final int HEAP_REFUNDS = 100;
    private static final BigDecimal AMOUNT = new BigDecimal("70.25");

    /** How much work each phase gets. */
    private record Workload(List<Integer> sizes, int merchants, int refundsPerMerchant, int warmUpMerchantsPerWorker,
                            int heapRounds, Duration commitProbe, Duration runTimeout) {
    }

    private static final Workload FULL = new Workload(List.of(1, 2, 4), 200, 100, 40, 8, Duration.ofSeconds(3), Duration.ofMinutes(10));
    /** Quick mode proves the section runs, in well under a minute: one fleet of two workers, small phases. */
    private static final Workload QUICK = new Workload(List.of(2), 32, 25, 4, 2, Duration.ofSeconds(1), Duration.ofMinutes(2));

    /** What one fleet size measured. */
    private record SizeResult(int workers, double seconds, double commitsPerSecond, int commitConnections,
                              List<Double> heapPerInFlight, boolean heapAtFullLoad, List<Map.Entry<String, Long>> heapGrowth,
                              List<Long> rssPeakKib, List<Long> hwmKib, int workerDbConnections,
                              long settleMillis, long brokerMillis, long jobsDone, long retried, long deadLettered,
                              double cpuBusyShare, Map<String, Double> cpuSeconds) {
    }

    private final Workload load;
    private final String run = "f" + UUID.randomUUID().toString().replace("-", "").substring(0, 6);
    private final String redisUrl;
    private final String pgUrl;
    private final String natsUrl;
    private final String workerDbUrl;
    private final String applicationName = "fenced-fleet-bench-" + run;
    private final JobStream stream;
    private final Map<String, Set<Long>> servers = new LinkedHashMap<>();
    private final List<String> merchants = new ArrayList<>();
    private HikariDataSource db;
    private PaymentGateway gateway;
    private Connection broker;
    private JetStreamManagement management;
    private SettlementJobs jobs;
    private Path poolSettings;
    private final long started = System.nanoTime();

    private FleetThroughput(String redisUrl, String pgUrl, String natsUrl, boolean quick) {
        this.load = quick ? QUICK : FULL;
        this.redisUrl = redisUrl;
        this.pgUrl = pgUrl;
        this.natsUrl = natsUrl;
        // Tagged so that the workers' connections can be counted in pg_stat_activity.
        this.workerDbUrl = pgUrl.startsWith("jdbc:postgresql:") ? pgUrl + (pgUrl.contains("?") ? "&" : "?") + "ApplicationName=" + applicationName : pgUrl;
        this.stream = JobStream.builder().stream("BENCH_FLEET_" + run.toUpperCase(Locale.ROOT)).build();
    }

    static String run(String redisUrl, String pgUrl, String natsUrl, boolean quick) throws Exception {
        return new FleetThroughput(redisUrl, pgUrl, natsUrl, quick).measure();
    }

    private String measure() throws Exception {
        findServers();
        poolSettings = Files.createTempFile("fenced-fleet-bench-pool", ".properties");
        // A worker's pool holds jobs × (concurrency + 2) = 40 connections and, by HikariCP's default,
        // opens them all at start: four workers would ask PostgreSQL for 160, over its default
        // max_connections of 100. The workers here open connections as they need them instead.
        Files.writeString(poolSettings, "minimumIdle=2\n");
        List<SizeResult> results = new ArrayList<>();
        try {
            db = pool(pgUrl, 8);
            gateway = PaymentGateway.start(GatewayConfig.builder().latency(LATENCY).build());
            broker = Broker.connect(natsUrl, Duration.ofSeconds(5), "fenced-bench-" + run);
            management = broker.jetStreamManagement();
            RefundSchema.migrate(db);
            jobs = SettlementJobs.on(broker, stream);
            for (int size : load.sizes()) {
                results.add(measure(size));
            }
            verifyExactlyOnce();
            cleanUp();
        } finally {
            deleteStreams();
            if (broker != null) {
                broker.close();
            }
            if (gateway != null) {
                gateway.close();
            }
            if (db != null) {
                db.close();
            }
            Files.deleteIfExists(poolSettings);
        }
        return report(results);
    }

    /** The processes of the servers this run uses, when they run on this machine: for the CPU table. */
    private void findServers() {
        try {
            URI pg = URI.create(pgUrl.substring("jdbc:".length()));
            ProcStats.listener(pg.getPort() > 0 ? pg.getPort() : 5432).ifPresent(pid -> servers.put("PostgreSQL", Set.of(pid)));
        } catch (RuntimeException notAUri) {
            // left out of the CPU table
        }
        port(redisUrl, 6379).flatMap(p -> boxed(ProcStats.listener(p))).ifPresent(pid -> servers.put("Redis", Set.of(pid)));
        port(natsUrl, 4222).flatMap(p -> boxed(ProcStats.listener(p))).ifPresent(pid -> servers.put("NATS", Set.of(pid)));
    }

    private static Optional<Integer> port(String url, int defaultPort) {
        try {
            URI uri = URI.create(url);
            return Optional.of(uri.getPort() > 0 ? uri.getPort() : defaultPort);
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    private static Optional<Long> boxed(OptionalLong value) {
        return value.isPresent() ? Optional.of(value.getAsLong()) : Optional.empty();
    }

    private SizeResult measure(int size) throws Exception {
        List<FleetWorkerProcess> workers = new ArrayList<>();
        try {
            for (int i = 1; i <= size; i++) {
                workers.add(FleetWorkerProcess.start("w" + i, List.of("-Dhikaricp.configurationFile=" + poolSettings), workerArgs()));
            }
            for (FleetWorkerProcess worker : workers) {
                worker.awaitReady(Duration.ofSeconds(120));
            }
            progress(size, "workers taking jobs");
            List<Long> pids = workers.stream().map(FleetWorkerProcess::pid).toList();

            // Warm-up, untimed: the JIT compiles the workers' paths (and this JVM's gateway) first.
            settle(workers, seed(size + "w", size * load.warmUpMerchantsPerWorker(), load.refundsPerMerchant()), load.runTimeout());
            progress(size, "warm-up done");
            Thread.sleep(500);

            // Live heap idle, then at full load: every job slot busy, jobs still waiting when the readings end.
            boolean histograms = HeapHistogram.available();
            Map<Long, HeapHistogram> idle = histograms ? HeapHistogram.of(pids) : Map.of();
            List<String> heapMerchants = seed(size + "h", size * JOBS * load.heapRounds(), HEAP_REFUNDS);
            enqueue(heapMerchants);
            awaitAllSlotsBusy(workers, size * JOBS);
            Thread.sleep(500);
            Map<Long, HeapHistogram> busy = histograms ? HeapHistogram.of(pids) : Map.of();
            boolean fullLoad = consumer().getNumPending() > 0;
            progress(size, "heap read at full load" + (fullLoad ? "" : " (the load ran out meanwhile)"));
            awaitDone(workers, load.runTimeout());
            requireAllSent(heapMerchants);

            // The database's commit rate, in the same run: each job commits from at most two connections
            // at once (its claim of the next rows, and its batch of confirms), so two per job slot.
            int connections = size * JOBS * 2;
            double commitsPerSecond;
            try (HikariDataSource probe = pool(pgUrl, connections + 2)) {
                commitsPerSecond = SettlementThroughput.commitRate(probe, connections, load.commitProbe());
            }

            progress(size, String.format("database: %,.0f commits/s from %d connections", commitsPerSecond, connections));

            // The timed run: from the first enqueue, workers idle, until the last job is acked.
            List<String> timed = seed(size + "t", load.merchants(), load.refundsPerMerchant());
            Thread.sleep(500);
            Sampler sampler = new Sampler(pids);
            ProcStats.MachineCpu cpuBefore = ProcStats.machine();
            Map<Long, ProcStats.ProcessCpu> processesBefore = ProcStats.processes();
            long start = System.nanoTime();
            enqueue(timed);
            awaitDone(workers, load.runTimeout());
            double seconds = (System.nanoTime() - start) / 1e9;
            ProcStats.MachineCpu cpuAfter = ProcStats.machine();
            Map<Long, ProcStats.ProcessCpu> processesAfter = ProcStats.processes();
            sampler.close();
            requireAllSent(timed);
            progress(size, String.format("timed run: %.2f s", seconds));

            Map<String, Double> cpu = new LinkedHashMap<>();
            cpu.put("workers", ProcStats.cpuSeconds(processesBefore, processesAfter, new HashSet<>(pids), false));
            cpu.put("gateway + bench", ProcStats.cpuSeconds(processesBefore, processesAfter, Set.of(ProcessHandle.current().pid()), false));
            servers.forEach((name, serverPids) -> cpu.put(name, ProcStats.cpuSeconds(processesBefore, processesAfter, serverPids, true)));
            double known = cpu.values().stream().mapToDouble(Double::doubleValue).sum();
            cpu.put("other", Math.max(0, cpuAfter.busySecondsSince(cpuBefore) - known));

            List<Long> hwm = pids.stream().map(pid -> ProcStats.statusKib(pid, "VmHWM").orElse(0)).toList();
            for (FleetWorkerProcess worker : workers) {
                worker.requestDrain();
            }
            long settle = 0;
            long brokerTime = 0;
            long done = 0;
            long retried = 0;
            long dead = 0;
            for (FleetWorkerProcess worker : workers) {
                FleetWorkerProcess.Drained drained = worker.awaitDrained(Duration.ofSeconds(60));
                settle += drained.settleMillis();
                brokerTime += drained.brokerMillis();
                done += drained.done();
                retried += drained.retried();
                dead += drained.deadLettered();
            }

            List<Double> perInFlight = new ArrayList<>();
            List<Map.Entry<String, Long>> growth = List.of();
            if (histograms) {
                for (long pid : pids) {
                    perInFlight.add((busy.get(pid).totalBytes() - idle.get(pid).totalBytes()) / (double) IN_FLIGHT_PER_WORKER);
                }
                growth = busy.get(pids.get(0)).largestGrowthSince(idle.get(pids.get(0)), 6);
            }
            return new SizeResult(size, seconds, commitsPerSecond, connections, perInFlight, fullLoad, growth,
                    sampler.peakRssKib(), hwm, sampler.peakDbConnections(), settle, brokerTime, done, retried, dead,
                    cpuAfter.busyShareSince(cpuBefore), cpu);
        } finally {
            workers.forEach(FleetWorkerProcess::close);
        }
    }

    /** One line on stderr per phase, so that a long run shows where it is; the report goes to stdout at the end. */
    private void progress(int size, String what) {
        System.err.printf("fleet: [%5.1f s] %d worker%s: %s%n", (System.nanoTime() - started) / 1e9, size, size == 1 ? "" : "s", what);
    }

    private List<String> workerArgs() {
        return List.of("--jobs", Integer.toString(JOBS), "--concurrency", Integer.toString(CONCURRENCY), "--stream", stream.stream(),
                "--nats-url", natsUrl, "--redis-url", redisUrl, "--db-url", workerDbUrl, "--gateway-url", gateway.url());
    }

    /** Seeds {@code count} new merchants of this run, {@code refunds} pending refunds each, four at a time. */
    private List<String> seed(String phase, int count, int refunds) throws Exception {
        List<String> seeded = IntStream.range(0, count).mapToObj(i -> String.format("%s_%s_%03d", run, phase, i)).toList();
        BigDecimal total = AMOUNT.multiply(BigDecimal.valueOf(refunds));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> inserts = new ArrayList<>();
            for (String merchant : seeded) {
                inserts.add(pool.submit(() -> RefundSeeder.seed(db, merchant, merchant + "_r", refunds, total, "EUR")));
            }
            for (Future<Integer> insert : inserts) {
                insert.get();
            }
        } finally {
            pool.shutdown();
        }
        merchants.addAll(seeded);
        return seeded;
    }

    private void enqueue(List<String> batch) {
        for (String merchant : batch) {
            if (jobs.enqueue(merchant).duplicate()) {
                throw new IllegalStateException("the job of " + merchant + " was already on " + stream.stream());
            }
        }
    }

    private void settle(List<FleetWorkerProcess> workers, List<String> batch, Duration timeout) throws Exception {
        enqueue(batch);
        awaitDone(workers, timeout);
        requireAllSent(batch);
    }

    private ConsumerInfo consumer() throws IOException, JetStreamApiException {
        return management.getConsumerInfo(stream.stream(), stream.consumer());
    }

    /** Until no job waits and none is in progress: every job of the stream acked. */
    private void awaitDone(List<FleetWorkerProcess> workers, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            ConsumerInfo info = consumer();
            if (info.getNumPending() == 0 && info.getNumAckPending() == 0) {
                return;
            }
            requireAlive(workers);
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("fleet: " + info.getNumPending() + " jobs waiting and " + info.getNumAckPending()
                        + " in progress after " + timeout);
            }
            Thread.sleep(20);
        }
    }

    private void awaitAllSlotsBusy(List<FleetWorkerProcess> workers, int slots) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (consumer().getNumAckPending() < slots) {
            requireAlive(workers);
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("fleet: the workers never took " + slots + " jobs at once");
            }
            Thread.sleep(10);
        }
    }

    private static void requireAlive(List<FleetWorkerProcess> workers) {
        for (FleetWorkerProcess worker : workers) {
            if (!worker.alive()) {
                throw new IllegalStateException("fleet: worker " + worker.name() + " died: " + worker.tail());
            }
        }
    }

    private void requireAllSent(List<String> batch) throws SQLException {
        try (java.sql.Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT COUNT(*) FILTER (WHERE state = 'sent'), COUNT(*) FROM refund WHERE merchant = ANY(?)")) {
            s.setArray(1, c.createArrayOf("varchar", batch.toArray()));
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                if (rs.getLong(1) != rs.getLong(2)) {
                    throw new IllegalStateException("fleet: only " + rs.getLong(1) + " of " + rs.getLong(2) + " refunds sent once the jobs were acked");
                }
            }
        }
    }

    /** Every refund of the run sent, and at the gateway exactly once: one refund per reference, none other. */
    private void verifyExactlyOnce() throws Exception {
        Set<String> ids = new HashSet<>();
        try (java.sql.Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT id, state FROM refund WHERE merchant = ANY(?)")) {
            s.setArray(1, c.createArrayOf("varchar", merchants.toArray()));
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    if (!rs.getString(2).equals("sent")) {
                        throw new IllegalStateException("fleet: refund " + rs.getString(1) + " ended " + rs.getString(2));
                    }
                    ids.add(rs.getString(1));
                }
            }
        }
        List<GatewayRefund> ledger = gateway.ledger();
        Map<String, Long> byReference = ledger.stream().collect(Collectors.groupingBy(GatewayRefund::reference, Collectors.counting()));
        long duplicated = byReference.values().stream().filter(n -> n > 1).count();
        if (duplicated > 0 || !byReference.keySet().equals(ids) || ledger.size() != ids.size()) {
            throw new IllegalStateException("fleet: exactly-once broken: " + ids.size() + " refunds sent, " + ledger.size()
                    + " at the gateway, " + duplicated + " references paid more than once");
        }
        long dead = management.getStreamInfo(stream.deadStream()).getStreamState().getMsgCount();
        if (dead > 0) {
            throw new IllegalStateException("fleet: " + dead + " jobs dead-lettered");
        }
    }

    /**
     * Deletes the run's rows and forgets its merchants' lease keys, once the run is verified: a
     * failed run keeps them, for a look with {@code fenced status} and {@code reconcile}.
     */
    private void cleanUp() throws SQLException {
        try (RedisLeaseStore leases = RedisLeaseStore.builder(redisUrl).build()) {
            for (String merchant : merchants) {
                leases.forget(Merchants.resource(merchant));
            }
        }
        try (java.sql.Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("DELETE FROM refund WHERE merchant = ANY(?)")) {
            s.setArray(1, c.createArrayOf("varchar", merchants.toArray()));
            s.executeUpdate();
        }
    }

    private void deleteStreams() {
        if (management == null) {
            return;
        }
        try {
            stream.delete(broker);
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            System.err.println("fleet: could not delete the stream " + stream.stream() + ": " + e.getMessage());
        }
    }

    private static HikariDataSource pool(String url, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(1);
        return new HikariDataSource(config);
    }

    /**
     * Samples each worker's resident set every 100 ms, and the database connections the workers
     * hold open (PostgreSQL, by application name), while the timed run lasts.
     */
    private final class Sampler implements AutoCloseable {
        private final List<Long> pids;
        private final Map<Long, Long> peakRss = new ConcurrentHashMap<>();
        private final AtomicInteger peakConnections = new AtomicInteger(-1);
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "fleet-sampler");
            thread.setDaemon(true);
            return thread;
        });
        private final AtomicInteger ticks = new AtomicInteger();

        Sampler(List<Long> pids) {
            this.pids = pids;
            timer.scheduleAtFixedRate(this::sample, 0, 100, TimeUnit.MILLISECONDS);
        }

        private void sample() {
            for (long pid : pids) {
                ProcStats.statusKib(pid, "VmRSS").ifPresent(kib -> peakRss.merge(pid, kib, Math::max));
            }
            if (ticks.getAndIncrement() % 5 == 0 && pgUrl.startsWith("jdbc:postgresql:")) {
                try (java.sql.Connection c = db.getConnection();
                     PreparedStatement s = c.prepareStatement("SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = ?")) {
                    s.setString(1, applicationName);
                    try (ResultSet rs = s.executeQuery()) {
                        rs.next();
                        peakConnections.accumulateAndGet(rs.getInt(1), Math::max);
                    }
                } catch (SQLException | RuntimeException e) {
                    // a missed sample
                }
            }
        }

        List<Long> peakRssKib() {
            return pids.stream().map(pid -> peakRss.getOrDefault(pid, 0L)).toList();
        }

        int peakDbConnections() {
            return peakConnections.get();
        }

        @Override
        public void close() {
            timer.shutdown();
            try {
                timer.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private String report(List<SizeResult> results) {
        double one = results.stream().filter(r -> r.workers() == 1).mapToDouble(r -> load.merchants() * load.refundsPerMerchant() / r.seconds())
                .findFirst().orElse(Double.NaN);
        int refunds = load.merchants() * load.refundsPerMerchant();
        StringBuilder out = new StringBuilder(String.format("## Fleet: %,d merchants × %,d refunds (%,d), gateway latency %d ms, workers with"
                + " --jobs %d --concurrency %d%n%n", load.merchants(), load.refundsPerMerchant(), refunds, LATENCY.toMillis(), JOBS, CONCURRENCY))
                .append("| workers | in flight | seconds | refunds/s | limit refunds/s (bound) | limit / measured | vs 1 worker"
                        + " | broker share | heap per in-flight refund | RSS per worker | CPU busy |\n")
                .append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        boolean partialLoad = false;
        for (SizeResult r : results) {
            int inFlight = r.workers() * IN_FLIGHT_PER_WORKER;
            double measured = refunds / r.seconds();
            double gatewayLimit = inFlight / (LATENCY.toMillis() / 1000.0);
            double limit = Math.min(gatewayLimit, r.commitsPerSecond());
            String bound = gatewayLimit <= r.commitsPerSecond() ? "gateway" : "database";
            long jobMillis = r.settleMillis() + r.brokerMillis();
            partialLoad |= !r.heapAtFullLoad();
            out.append(String.format("| %d | %d | %.2f | %,.0f | %,.0f (%s) | %.2fx | %s | %.1f %% | %s%s | %s | %.0f %% |%n",
                    r.workers(), inFlight, r.seconds(), measured, limit, bound, limit / measured,
                    Double.isNaN(one) ? "n/a" : String.format("%.2fx", measured / one),
                    jobMillis == 0 ? 0 : 100.0 * r.brokerMillis() / jobMillis, kibRange(r.heapPerInFlight()),
                    r.heapAtFullLoad() ? "" : " *", rss(r.rssPeakKib(), r.hwmKib()), 100 * r.cpuBusyShare()));
        }
        out.append("\n| workers | DB commits/s (connections) | worker DB connections open | jobs done / retried / dead-lettered | CPU s: ");
        List<String> groups = new ArrayList<>(results.get(0).cpuSeconds().keySet());
        out.append(String.join(" | ", groups)).append(" |\n|---:|---:|---:|---:|").append("---:|".repeat(groups.size())).append('\n');
        for (SizeResult r : results) {
            out.append(String.format("| %d | %,.0f (%d) | %s | %d / %d / %d |", r.workers(), r.commitsPerSecond(), r.commitConnections(),
                    r.workerDbConnections() < 0 ? "n/a" : Integer.toString(r.workerDbConnections()), r.jobsDone(), r.retried(), r.deadLettered()));
            for (String group : groups) {
                out.append(String.format(" %.1f |", r.cpuSeconds().getOrDefault(group, 0.0)));
            }
            out.append('\n');
        }
        out.append("\nSeconds run from the first enqueue (workers started, warmed up and idle) until the last job is acked; every refund")
                .append(" is then checked sent, and at the end every refund of the run is checked paid exactly once in the gateway's ledger.")
                .append(" The limit is min(refunds in flight / 25 ms, the commits per second of single-row auto-commit UPDATEs from two")
                .append(" connections per job slot, measured just before). The broker's share is the workers' own account at SIGTERM:")
                .append(" time with the broker (fetches that brought jobs, acks, heartbeats) over that plus the time settling, over each")
                .append(" worker's life (warm-up, heap phase and timed run). Heap: live bytes after a full collection (jcmd")
                .append(" GC.class_histogram) with every job slot busy, minus the same idle after the warm-up, over 32 in-flight refunds;")
                .append(" the mean over the workers, with their range. RSS: the highest VmRSS sampled during the timed run, mean over the")
                .append(" workers, and the highest VmHWM of their lives. CPU busy and CPU seconds: /proc, over the timed run, all cores")
                .append(" (2 cores give 2 CPU seconds per second); \"other\" is every other process of the machine.\n");
        if (partialLoad) {
            out.append("\n\\* the heap phase's jobs ran out while the histograms were taken: fewer than 32 refunds may have been in flight.\n");
        }
        SizeResult first = results.get(0);
        if (!first.heapGrowth().isEmpty()) {
            out.append(String.format("%nLargest live-heap growth per in-flight refund, %d worker%s, first worker: ", first.workers(),
                    first.workers() == 1 ? "" : "s"));
            out.append(first.heapGrowth().stream().map(e -> String.format("%s %.1f KiB", className(e.getKey()),
                    e.getValue() / (double) IN_FLIGHT_PER_WORKER / 1024)).collect(Collectors.joining(", "))).append(".\n");
        }
        return out.append('\n').toString();
    }

    private static String kibRange(List<Double> bytes) {
        if (bytes.isEmpty()) {
            return "n/a";
        }
        Function<Double, String> kib = b -> String.format("%.1f", b / 1024);
        double mean = bytes.stream().mapToDouble(Double::doubleValue).average().orElse(0);
        if (bytes.size() == 1) {
            return kib.apply(mean) + " KiB";
        }
        double min = bytes.stream().mapToDouble(Double::doubleValue).min().orElse(0);
        double max = bytes.stream().mapToDouble(Double::doubleValue).max().orElse(0);
        return kib.apply(mean) + " KiB (" + kib.apply(min) + " to " + kib.apply(max) + ")";
    }

    private static String rss(List<Long> peakKib, List<Long> hwmKib) {
        double mean = peakKib.stream().mapToLong(Long::longValue).average().orElse(0);
        long hwm = hwmKib.stream().mapToLong(Long::longValue).max().orElse(0);
        return mean == 0 ? "n/a" : String.format("%.0f MiB (peak %.0f)", mean / 1024, hwm / 1024.0);
    }

    private static String className(String jvmName) {
        return switch (jvmName) {
            case "[B" -> "byte[]";
            case "[C" -> "char[]";
            case "[I" -> "int[]";
            case "[J" -> "long[]";
            default -> jvmName.startsWith("[L") && jvmName.endsWith(";") ? jvmName.substring(2, jvmName.length() - 1) + "[]" : jvmName;
        };
    }
}
