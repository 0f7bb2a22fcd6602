package dev.fenced.bench;

import static dev.fenced.bench.FleetThroughput.CONCURRENCY;
import static dev.fenced.bench.FleetThroughput.IN_FLIGHT_PER_WORKER;
import static dev.fenced.bench.FleetThroughput.JOBS;
import static dev.fenced.bench.FleetThroughput.LATENCY;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The fleet section's report: what each fleet size measured, as Markdown tables with the limit each
 * is held to and a note on how every figure was taken. Formatting only; measures nothing.
 */
final class FleetReport {
    private FleetReport() {
    }

    /** What one fleet size measured. */
    record SizeResult(int workers, double seconds, double commitsPerSecond, int commitConnections,
                              List<Double> heapPerInFlight, boolean heapAtFullLoad, List<Map.Entry<String, Long>> heapGrowth,
                              List<Long> rssPeakKib, List<Long> hwmKib, int workerDbConnections,
                              long settleMillis, long brokerMillis, long jobsDone, long retried, long deadLettered,
                              double cpuBusyShare, Map<String, Double> cpuSeconds, Map<String, Double> jvmThreadSeconds,
                              PgCounters postgres) {
        /** The CPU seconds of a group ("workers") less those of its JVM threads of one kind ("JIT"). */
        double withoutJvmThreads(String group, String kind) {
            return cpuSeconds.getOrDefault(group, 0.0) - jvmThreadSeconds.getOrDefault(group + ": " + kind, 0.0);
        }
    }

    /** The section's Markdown: one row per fleet size, the limits they are held to, and how each figure was taken. */
    static String markdown(int merchants, int refundsPerMerchant, List<SizeResult> results) {
        double one = results.stream().filter(r -> r.workers() == 1).mapToDouble(r -> merchants * refundsPerMerchant / r.seconds())
                .findFirst().orElse(Double.NaN);
        int refunds = merchants * refundsPerMerchant;
        String jvmOptions = FleetThroughput.extraWorkerJvmOptions();
        java.util.OptionalInt warmUp = FleetThroughput.warmUpMerchantsPerWorker();
        String asked = (jvmOptions.isEmpty() ? "" : " and the JVM options " + jvmOptions)
                + (warmUp.isEmpty() ? "" : ", a warm-up of " + warmUp.getAsInt() + " merchants per worker");
        StringBuilder out = new StringBuilder(String.format("## Fleet: %,d merchants × %,d refunds (%,d), gateway latency %d ms, workers with"
                + " --jobs %d --concurrency %d%s%n%n", merchants, refundsPerMerchant, refunds, LATENCY.toMillis(), JOBS, CONCURRENCY, asked))
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
        out.append(perRefund(refunds, results));
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

    /** CPU per refund with the JIT's share apart, and PostgreSQL's own counters per refund, when it keeps them. */
    private static String perRefund(int refunds, List<SizeResult> results) {
        StringBuilder out = new StringBuilder("\n| workers | CPU ms per refund: workers | their JIT | their GC | workers without JIT"
                + " | gateway + bench | its JIT | all | all without JIT |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (SizeResult r : results) {
            double all = r.cpuSeconds().values().stream().mapToDouble(Double::doubleValue).sum();
            double jit = r.jvmThreadSeconds().entrySet().stream().filter(e -> e.getKey().endsWith(": JIT")).mapToDouble(Map.Entry::getValue).sum();
            out.append(String.format("| %d | %s | %s | %s | %s | %s | %s | %s | %s |%n", r.workers(),
                    ms(r.cpuSeconds().getOrDefault("workers", 0.0), refunds), ms(r.jvmThreadSeconds().getOrDefault("workers: JIT", 0.0), refunds),
                    ms(r.jvmThreadSeconds().getOrDefault("workers: GC", 0.0), refunds), ms(r.withoutJvmThreads("workers", "JIT"), refunds),
                    ms(r.cpuSeconds().getOrDefault("gateway + bench", 0.0), refunds),
                    ms(r.jvmThreadSeconds().getOrDefault("gateway + bench: JIT", 0.0), refunds), ms(all, refunds), ms(all - jit, refunds)));
        }
        out.append("\nThe JVMs' own threads are read from /proc per thread over the same window: JIT is the C1 and C2 compiler threads,")
                .append(" GC the collector's threads and the VM thread (safepoint operations).\n");
        if (results.stream().anyMatch(r -> r.postgres() != null)) {
            out.append("\n| workers | PostgreSQL per refund: statements | rows | WAL records | WAL bytes |\n|---:|---:|---:|---:|---:|\n");
            for (SizeResult r : results) {
                if (r.postgres() != null) {
                    PgCounters.Work all = r.postgres().total();
                    out.append(String.format("| %d | %.3f | %.3f | %.2f | %.0f |%n", r.workers(), all.calls() / (double) refunds,
                            all.rows() / (double) refunds, all.walRecords() / (double) refunds, all.walBytes() / (double) refunds));
                }
            }
            out.append("\nThe server's own account (pg_stat_statements, this database, the bench's queries of pg_stat_* views left out), over")
                    .append(" the timed run: every statement it recorded (BEGIN is among them, COMMIT is not), and the rows and WAL each")
                    .append(" produced (commit records not included).\n");
            SizeResult first = results.get(0);
            if (first.postgres() != null) {
                out.append(String.format("%nBy statement, %d worker%s, per refund, the most called first (calls, rows, WAL bytes):%n%n",
                        first.workers(), first.workers() == 1 ? "" : "s"));
                first.postgres().byStatement().entrySet().stream().limit(10).forEach(e -> out.append(String.format("- %.3f, %.3f, %.0f `%s`%n",
                        e.getValue().calls() / (double) refunds, e.getValue().rows() / (double) refunds,
                        e.getValue().walBytes() / (double) refunds, abbreviated(e.getKey()))));
            }
        }
        return out.toString();
    }

    private static String ms(double seconds, int refunds) {
        return String.format("%.3f", seconds * 1000 / refunds);
    }

    /** A statement's text on one line, at most 110 characters. */
    private static String abbreviated(String sql) {
        String line = sql.replaceAll("\\s+", " ").replace('`', '\'').trim();
        return line.length() <= 110 ? line : line.substring(0, 107) + "...";
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
