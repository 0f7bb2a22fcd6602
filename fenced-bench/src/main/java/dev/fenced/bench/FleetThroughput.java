package dev.fenced.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.fleet.Broker;
import dev.fenced.fleet.JobStream;
import dev.fenced.fleet.SettlementJobs;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.settlement.RefundSchema;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ConsumerInfo;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;

/**
 * The fleet: real {@code fenced worker} processes (each {@code --jobs 4 --concurrency 8}) fed by a
 * JetStream stream of their own, against the simulated gateway (25 ms) in this JVM. For 1, 2 and
 * 4 workers, the time from the first enqueue of 200 merchants × 100 refunds (workers started and
 * idle) until the last job is acked, against the limit min(refunds in flight / latency, the
 * database's commit rate measured in the same run); the broker's share of the workers' job time
 * (their own account, printed when SIGTERM drains them); each worker's live heap at full load
 * against idle, per in-flight refund; its resident set; and where the machine's CPU went. Every
 * refund of the run must be sent and at the gateway exactly once, or the bench fails.
 *
 * <p>This class runs the phases; the run's merchants and their checks are {@link FleetMerchants}'s,
 * the sampling during the timed run {@link FleetSampler}'s, the tables {@link FleetReport}'s.
 */
final class FleetThroughput {
    static final Duration LATENCY = Duration.ofMillis(25);
    private static final Duration PAUSE = Duration.ofMillis(500);
    static final int JOBS = 4;
    static final int CONCURRENCY = 8;
    static final int IN_FLIGHT_PER_WORKER = JOBS * CONCURRENCY;
    /** The heap phase settles merchants of 100 refunds, as the full run does, also in quick mode: long enough for jcmd. */
    private static final int HEAP_REFUNDS = 100;

    /** How much work each phase gets. */
    private record Workload(List<Integer> sizes, int merchants, int refundsPerMerchant, int warmUpMerchantsPerWorker,
                            int heapRounds, Duration commitProbe, Duration runTimeout) {
    }

    private static final Workload FULL = new Workload(List.of(1, 2, 4), 200, 100, 40, 8, Duration.ofSeconds(3), Duration.ofMinutes(10));
    /** Quick mode proves the section runs, in well under a minute: one fleet of two workers, small phases. */
    private static final Workload QUICK = new Workload(List.of(2), 32, 25, 4, 2, Duration.ofSeconds(1), Duration.ofMinutes(2));

    private final Workload load;
    private final String run = "f" + UUID.randomUUID().toString().replace("-", "").substring(0, 6);
    private final String redisUrl;
    private final String pgUrl;
    private final String natsUrl;
    private final String workerDbUrl;
    private final String applicationName = "fenced-fleet-bench-" + run;
    private final JobStream stream;
    private final Map<String, Set<Long>> servers = new LinkedHashMap<>();
    private HikariDataSource db;
    private PaymentGateway gateway;
    private Connection broker;
    private JetStreamManagement management;
    private SettlementJobs jobs;
    private FleetMerchants merchants;
    private Path poolSettings;
    private final long started = System.nanoTime();

    private FleetThroughput(String redisUrl, String pgUrl, String natsUrl, boolean quick) {
        Workload chosen = quick ? QUICK : FULL;
        OptionalInt warmUp = warmUpMerchantsPerWorker();
        this.load = warmUp.isEmpty() ? chosen : new Workload(chosen.sizes(), chosen.merchants(), chosen.refundsPerMerchant(),
                warmUp.getAsInt(), chosen.heapRounds(), chosen.commitProbe(), chosen.runTimeout());
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
        List<FleetReport.SizeResult> results = new ArrayList<>();
        try {
            db = pool(pgUrl, 8);
            gateway = PaymentGateway.start(GatewayConfig.builder().latency(LATENCY).build());
            broker = Broker.connect(natsUrl, Duration.ofSeconds(5), "fenced-bench-" + run);
            management = broker.jetStreamManagement();
            RefundSchema.migrate(db);
            jobs = SettlementJobs.on(broker, stream);
            merchants = new FleetMerchants(run, db, jobs, stream);
            for (int size : load.sizes()) {
                results.add(measure(size));
            }
            merchants.verifyExactlyOnce(gateway, management);
            merchants.cleanUp(redisUrl);
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
        return FleetReport.markdown(load.merchants(), load.refundsPerMerchant(), results);
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

    /**
     * The pool's settings, then {@value #WORKER_JVM_OPTIONS} split at spaces (e.g. {@code
     * -XX:+UseSerialGC}): the workers' JVM alone, where {@code JAVA_TOOL_OPTIONS} would change this
     * JVM's (the gateway's) too.
     */
    private List<String> workerJvmOptions() {
        List<String> options = new ArrayList<>(List.of("-Dhikaricp.configurationFile=" + poolSettings));
        String extra = extraWorkerJvmOptions();
        if (!extra.isEmpty()) {
            options.addAll(List.of(extra.split("\\s+")));
        }
        return options;
    }

    static final String WORKER_JVM_OPTIONS = "fenced.bench.workerJvmOptions";
    static final String WARM_UP_MERCHANTS = "fenced.bench.warmUpMerchantsPerWorker";

    /**
     * The warm-up's merchants per worker that {@value #WARM_UP_MERCHANTS} asks for in place of the
     * workload's own, to measure a worker whose JIT has had longer (10 times the 40 of the full run:
     * about 40 s per worker); empty when not set.
     *
     * @throws IllegalArgumentException when it is not a whole number from 1 to 10,000
     */
    static OptionalInt warmUpMerchantsPerWorker() {
        String value = System.getProperty(WARM_UP_MERCHANTS, "").strip();
        if (value.isEmpty()) {
            return OptionalInt.empty();
        }
        try {
            int merchants = Integer.parseInt(value);
            if (merchants >= 1 && merchants <= 10_000) {
                return OptionalInt.of(merchants);
            }
        } catch (NumberFormatException e) {
            // named below
        }
        throw new IllegalArgumentException(WARM_UP_MERCHANTS + " must be a whole number from 1 to 10,000, got " + value);
    }

    /** The options {@value #WORKER_JVM_OPTIONS} adds, as given, or "" for none. */
    static String extraWorkerJvmOptions() {
        return System.getProperty(WORKER_JVM_OPTIONS, "").strip();
    }

    private FleetReport.SizeResult measure(int size) throws Exception {
        List<FleetWorkerProcess> workers = new ArrayList<>();
        try {
            for (int i = 1; i <= size; i++) {
                workers.add(FleetWorkerProcess.start("w" + i, workerJvmOptions(), workerArgs()));
            }
            for (FleetWorkerProcess worker : workers) {
                worker.awaitReady(Duration.ofSeconds(120));
            }
            progress(size, "workers taking jobs");
            List<Long> pids = workers.stream().map(FleetWorkerProcess::pid).toList();

            // Warm-up, untimed: the JIT compiles the workers' paths (and this JVM's gateway) first.
            settle(workers, merchants.seed(size + "w", size * load.warmUpMerchantsPerWorker(), load.refundsPerMerchant()), load.runTimeout());
            progress(size, "warm-up done");
            pause(); // the warm-up's last acks and writes end before the idle heap is read

            // Live heap idle, then at full load: every job slot busy, jobs still waiting when the readings end.
            boolean histograms = HeapHistogram.available();
            Map<Long, HeapHistogram> idle = histograms ? HeapHistogram.of(pids) : Map.of();
            List<String> heapMerchants = merchants.seed(size + "h", size * JOBS * load.heapRounds(), HEAP_REFUNDS);
            merchants.enqueue(heapMerchants);
            awaitAllSlotsBusy(workers, size * JOBS);
            pause(); // the jobs just taken get their refunds in flight before the histogram
            Map<Long, HeapHistogram> busy = histograms ? HeapHistogram.of(pids) : Map.of();
            boolean fullLoad = consumer().getNumPending() > 0;
            progress(size, "heap read at full load" + (fullLoad ? "" : " (the load ran out meanwhile)"));
            awaitDone(workers, load.runTimeout());
            merchants.requireAllSent(heapMerchants);

            // The database's commit rate, in the same run: each job commits from at most two connections
            // at once (its claim of the next rows, and its batch of confirms), so two per job slot.
            int connections = size * JOBS * 2;
            double commitsPerSecond;
            try (HikariDataSource probe = pool(pgUrl, connections + 2)) {
                commitsPerSecond = SettlementThroughput.commitRate(probe, connections, load.commitProbe());
            }

            progress(size, String.format("database: %,.0f commits/s from %d connections", commitsPerSecond, connections));

            // The timed run: from the first enqueue, workers idle, until the last job is acked.
            List<String> timed = merchants.seed(size + "t", load.merchants(), load.refundsPerMerchant());
            boolean postgres = pgUrl.startsWith("jdbc:postgresql:");
            pause(); // the seeding's writes are not counted in the timed run's CPU
            Optional<PgCounters> pgBefore = postgres ? PgCounters.read(db) : Optional.empty();
            long self = ProcessHandle.current().pid();
            FleetSampler sampler = new FleetSampler(pids, Map.of("workers", pids, "gateway + bench", List.of(self)), db,
                    postgres ? applicationName : null);
            ProcStats.MachineCpu cpuBefore = ProcStats.machine();
            Map<Long, ProcStats.ProcessCpu> processesBefore = ProcStats.processes();
            long start = System.nanoTime();
            merchants.enqueue(timed);
            awaitDone(workers, load.runTimeout());
            double seconds = (System.nanoTime() - start) / 1e9;
            sampler.close();
            ProcStats.MachineCpu cpuAfter = ProcStats.machine();
            Map<Long, ProcStats.ProcessCpu> processesAfter = ProcStats.processes();
            // before the check below, whose own query is not the run's
            PgCounters pg = pgBefore.isPresent() ? PgCounters.read(db).flatMap(after -> after.since(pgBefore.get())).orElse(null) : null;
            merchants.requireAllSent(timed);
            progress(size, String.format("timed run: %.2f s", seconds));

            Map<String, Double> cpu = new LinkedHashMap<>();
            cpu.put("workers", ProcStats.cpuSeconds(processesBefore, processesAfter, new HashSet<>(pids), false));
            cpu.put("gateway + bench", ProcStats.cpuSeconds(processesBefore, processesAfter, Set.of(self), false));
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
            return new FleetReport.SizeResult(size, seconds, commitsPerSecond, connections, perInFlight, fullLoad, growth,
                    sampler.peakRssKib(), hwm, sampler.peakDbConnections(), settle, brokerTime, done, retried, dead,
                    cpuAfter.busyShareSince(cpuBefore), cpu, sampler.jvmThreadSeconds(), pg);
        } finally {
            workers.forEach(FleetWorkerProcess::close);
        }
    }

    /**
     * Half a second in which the bench asks nothing, between two phases: not a wait for a condition
     * (there is none to read) but a gap, so that one phase's tail is not measured in the next.
     */
    private static void pause() throws InterruptedException {
        Thread.sleep(PAUSE.toMillis());
    }

    /** One line on stderr per phase, so that a long run shows where it is; the report goes to stdout at the end. */
    private void progress(int size, String what) {
        System.err.printf("fleet: [%5.1f s] %d worker%s: %s%n", (System.nanoTime() - started) / 1e9, size, size == 1 ? "" : "s", what);
    }

    private List<String> workerArgs() {
        return List.of("--jobs", Integer.toString(JOBS), "--concurrency", Integer.toString(CONCURRENCY), "--stream", stream.stream(),
                "--nats-url", natsUrl, "--redis-url", redisUrl, "--db-url", workerDbUrl, "--gateway-url", gateway.url());
    }

    private void settle(List<FleetWorkerProcess> workers, List<String> batch, Duration timeout) throws Exception {
        merchants.enqueue(batch);
        awaitDone(workers, timeout);
        merchants.requireAllSent(batch);
    }

    private ConsumerInfo consumer() throws IOException, JetStreamApiException {
        return management.getConsumerInfo(stream.stream(), stream.consumer());
    }

    /** Until no job waits and none is in progress: every job of the stream acked. */
    private void awaitDone(List<FleetWorkerProcess> workers, Duration timeout) throws Exception {
        ConsumerInfo[] last = new ConsumerInfo[1];
        Poll.until(timeout, Duration.ofMillis(20), () -> {
            last[0] = consumer();
            return last[0].getNumPending() == 0 && last[0].getNumAckPending() == 0 || requireAlive(workers);
        }, () -> "fleet: " + last[0].getNumPending() + " jobs waiting and " + last[0].getNumAckPending() + " in progress after " + timeout);
    }

    private void awaitAllSlotsBusy(List<FleetWorkerProcess> workers, int slots) throws Exception {
        Poll.until(Duration.ofSeconds(30), Duration.ofMillis(10), () -> consumer().getNumAckPending() >= slots || requireAlive(workers),
                () -> "fleet: the workers never took " + slots + " jobs at once");
    }

    /** False while every worker lives, so that a wait goes on; throws for the first one dead. */
    private static boolean requireAlive(List<FleetWorkerProcess> workers) {
        for (FleetWorkerProcess worker : workers) {
            if (!worker.alive()) {
                throw new IllegalStateException("fleet: worker " + worker.name() + " died: " + worker.tail());
            }
        }
        return false;
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
}
