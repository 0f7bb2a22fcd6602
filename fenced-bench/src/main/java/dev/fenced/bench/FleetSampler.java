package dev.fenced.bench;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * Samples each worker's resident set every 100 ms, the database connections the workers hold open
 * (PostgreSQL, by application name), and the CPU of the JVMs' own threads (the JIT's compilers, the
 * collector's), while the timed run lasts. The JVM ends idle compiler threads, so their CPU is read
 * every 100 ms rather than only at both ends: a thread that ends loses at most its last 100 ms.
 */
final class FleetSampler implements AutoCloseable {
    private final List<Long> pids;
    private final DataSource db;
    /** Null when the database is not PostgreSQL: no connections to count. */
    private final String applicationName;
    private final Map<Long, Long> peakRss = new ConcurrentHashMap<>();
    private final AtomicInteger peakConnections = new AtomicInteger(-1);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "fleet-sampler");
        thread.setDaemon(true);
        return thread;
    });
    private final AtomicInteger ticks = new AtomicInteger();
    private final Map<String, List<Long>> jvms;
    /** By "<JVM group>: <thread kind>", each thread's ticks when first seen in the window and when last seen. */
    private final Map<String, Map<Long, long[]>> jvmThreadTicks = new ConcurrentHashMap<>();
    /**
     * By process, the threads found not to be the JVM's own, never read again: the gateway's JVM
     * has 130 threads, and reading each one's {@code stat} every 100 ms cost that JVM about 7 % of a
     * core, which the table counted as the gateway's (BENCHMARKS.md, 2026-12-06, last).
     */
    private final Map<Long, Set<Long>> passedOver = new ConcurrentHashMap<>();

    /** {@code jvms}: the processes whose JVM threads are read, by the name of the group they are reported under. */
    FleetSampler(List<Long> pids, Map<String, List<Long>> jvms, DataSource db, String applicationName) {
        this.pids = pids;
        this.jvms = jvms;
        this.db = db;
        this.applicationName = applicationName;
        sampleJvmThreads(true);
        timer.scheduleAtFixedRate(this::sample, 100, 100, TimeUnit.MILLISECONDS);
    }

    /** The kind of a JVM's own thread, by its name as Linux keeps it (15 characters); null for any other thread. */
    static String jvmThreadKind(String threadName) {
        if (threadName.startsWith("C1 CompilerThre") || threadName.startsWith("C2 CompilerThre")) {
            return "JIT";
        }
        if (threadName.startsWith("GC Thread") || threadName.startsWith("G1 ") || threadName.equals("VM Thread")) {
            return "GC";
        }
        return null;
    }

    private void sampleJvmThreads(boolean windowStart) {
        jvms.forEach((group, groupPids) -> {
            for (long pid : groupPids) {
                Set<Long> others = passedOver.computeIfAbsent(pid, p -> ConcurrentHashMap.newKeySet());
                ProcStats.threads(pid, name -> jvmThreadKind(name) != null, others).forEach((tid, thread) -> {
                    long now = thread.ticks();
                    // a thread first seen after the window's start started within it: all its ticks count
                    jvmThreadTicks.computeIfAbsent(group + ": " + jvmThreadKind(thread.name()), k -> new ConcurrentHashMap<>())
                            .compute(tid, (t, seen) -> seen == null ? new long[] {windowStart ? now : 0, now} : new long[] {seen[0], now});
                });
            }
        });
    }

    private void sample() {
        sampleJvmThreads(false);
        for (long pid : pids) {
            ProcStats.statusKib(pid, "VmRSS").ifPresent(kib -> peakRss.merge(pid, kib, Math::max));
        }
        if (ticks.getAndIncrement() % 5 == 0 && applicationName != null) {
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

    /** CPU seconds of the JVMs' own threads in the window, by "<JVM group>: <thread kind>" (e.g. "workers: JIT"). */
    Map<String, Double> jvmThreadSeconds() {
        Map<String, Double> seconds = new TreeMap<>();
        jvmThreadTicks.forEach((key, threads) -> seconds.put(key,
                threads.values().stream().mapToLong(t -> t[1] - t[0]).sum() / ProcStats.TICKS_PER_SECOND));
        return seconds;
    }

    /** Ends the sampling with a last reading of the JVMs' threads: the window ends here. */
    @Override
    public void close() {
        timer.shutdown();
        try {
            timer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sampleJvmThreads(false);
    }
}
