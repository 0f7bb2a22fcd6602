package dev.fenced.bench;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * Samples each worker's resident set every 100 ms, and the database connections the workers
 * hold open (PostgreSQL, by application name), while the timed run lasts.
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

    FleetSampler(List<Long> pids, DataSource db, String applicationName) {
        this.pids = pids;
        this.db = db;
        this.applicationName = applicationName;
        timer.scheduleAtFixedRate(this::sample, 0, 100, TimeUnit.MILLISECONDS);
    }

    private void sample() {
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
