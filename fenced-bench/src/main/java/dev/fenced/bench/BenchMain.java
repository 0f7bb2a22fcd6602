package dev.fenced.bench;

import dev.fenced.embedded.EmbeddedNats;
import dev.fenced.embedded.EmbeddedPostgresServer;
import dev.fenced.embedded.EmbeddedRedis;
import dev.fenced.cli.Progress;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs every benchmark with its baseline in the same run and prints ratios. Uses the servers in
 * {@code FENCED_REDIS_URL}, {@code FENCED_PG_URL}, {@code FENCED_MARIADB_URL} and (for the fleet)
 * {@code FENCED_NATS_URL}, or embedded ones. {@code --quick} proves they still run in a few
 * minutes; its figures are rough. {@code --only lease|cluster|writes|transactions|tokens|settlement|fleet|client|memory} runs
 * one section. The report goes to stdout; progress to stderr (a bar on a terminal, otherwise a line
 * per section and one every 30 s, {@code --progress-every MILLIS}), none with {@code --quiet}.
 */
public final class BenchMain {
    private BenchMain() {
    }

    public static void main(String[] args) throws Exception {
        // As the fenced command line does (FencedCli): with a common pool of one thread (2 cores), the JDK's HttpClient would
        // start a thread per call on JDK 17 to 21, and the client section would measure that rather than the client.
        if (System.getProperty("java.util.concurrent.ForkJoinPool.common.parallelism") == null && Runtime.getRuntime().availableProcessors() <= 2) {
            System.setProperty("java.util.concurrent.ForkJoinPool.common.parallelism", "2");
        }
        boolean quick = List.of(args).contains("--quick");
        boolean quiet = List.of(args).contains("--quiet");
        String only = null;
        Duration progressEvery = Duration.ofSeconds(30);
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("--only")) {
                only = args[i + 1];
            } else if (args[i].equals("--progress-every")) {
                progressEvery = Duration.ofMillis(Long.parseLong(args[i + 1]));
            }
        }
        if (only != null && !List.of("lease", "cluster", "stores", "writes", "transactions", "tokens", "settlement", "fleet", "client", "memory")
                .contains(only)) {
            System.err.println("benchmarks: --only takes lease, cluster, stores, writes, transactions, tokens, settlement, fleet, client or memory,"
                    + " got " + only);
            System.exit(2);
        }
        try {
            FleetThroughput.warmUpMerchantsPerWorker(); // refused before any server starts, in one line
        } catch (IllegalArgumentException e) {
            System.err.println("benchmarks: " + e.getMessage());
            System.exit(2);
        }
        EmbeddedRedis redis = null;
        EmbeddedPostgresServer postgres = null;
        EmbeddedNats nats = null;
        boolean fleet = only == null || only.equals("fleet");
        String natsUrl = env("FENCED_NATS_URL");
        String redisUrl = env("FENCED_REDIS_URL");
        String pgUrl = env("FENCED_PG_URL");
        String mariadbUrl = env("FENCED_MARIADB_URL");
        try {
            if (redisUrl == null) {
                redis = EmbeddedRedis.start();
                redisUrl = redis.uri();
            }
            if (pgUrl == null) {
                postgres = EmbeddedPostgresServer.start();
                pgUrl = postgres.jdbcUrl();
            }
            if (fleet && natsUrl == null) {
                nats = EmbeddedNats.start();
                natsUrl = nats.url();
            }
            System.setProperty(BenchServers.REDIS, redisUrl);
            System.setProperty(BenchServers.PG, pgUrl);
            if (mariadbUrl != null) {
                System.setProperty(BenchServers.MARIADB, mariadbUrl);
            }
            StringBuilder report = new StringBuilder();
            report.append("# fenced benchmarks").append(quick ? " (quick mode: rough figures)" : "").append("\n\n");
            report.append("Java ").append(System.getProperty("java.version")).append(", ")
                    .append(Runtime.getRuntime().availableProcessors()).append(" cores; Redis ")
                    .append(redis != null ? "embedded" : "from FENCED_REDIS_URL").append(", PostgreSQL ")
                    .append(postgres != null ? "embedded (fsync off)" : "from FENCED_PG_URL").append(", MariaDB ")
                    .append(mariadbUrl != null ? "from FENCED_MARIADB_URL" : "not measured (FENCED_MARIADB_URL unset)")
                    .append(fleet ? (nats != null ? ", NATS embedded (nats-server from the PATH)" : ", NATS from FENCED_NATS_URL") : "")
                    .append(".\n\n");
            Map<String, String> databases = new LinkedHashMap<>();
            databases.put("postgresql", pgUrl);
            if (mariadbUrl != null) {
                databases.put("mariadb", mariadbUrl);
            }
            String redis1 = redisUrl;
            String pg = pgUrl;
            String natsAt = natsUrl;
            String mariadbAt = mariadbUrl;
            Map<String, Section> sections = new LinkedHashMap<>();
            if (only == null || only.equals("lease")) {
                sections.put("lease", () -> PairedLeases.run(redis1, quick) + leases(quick, 1) + leases(quick, 8));
            }
            if (only == null || only.equals("lease") || only.equals("cluster")) {
                sections.put("cluster", () -> PairedLeases.runOnCluster(quick));
            }
            if (only == null || only.equals("stores")) {
                String etcdUrl = env("FENCED_ETCD_URL");
                sections.put("stores", () -> PairedLeaseStores.run(redis1, pg, mariadbAt, etcdUrl, quick));
            }
            if (only == null || only.equals("writes")) {
                sections.put("writes", () -> PairedWrites.run(databases, quick));
            }
            if (only == null || only.equals("transactions")) {
                sections.put("transactions", () -> PairedTransactions.run(databases, quick));
            }
            if (only == null || only.equals("tokens")) {
                sections.put("tokens", () -> PairedTokenSources.run(redis1, pg, quick) + tokens(quick));
            }
            if (only == null || only.equals("settlement")) {
                sections.put("settlement", () -> SettlementThroughput.run(redis1, pg, quick));
            }
            if (fleet) {
                sections.put("fleet", () -> FleetThroughput.run(redis1, pg, natsAt, quick));
            }
            if (only == null || only.equals("client")) {
                sections.put("client", () -> PairedGatewayClients.run(quick));
            }
            if (only == null || only.equals("memory")) {
                sections.put("memory", () -> Footprint.run(redis1, pg));
            }
            // Progress on stderr, the report on stdout: a section at a time, as a bar on a terminal or a line every interval.
            int done = 0;
            try (Progress progress = quiet ? Progress.off() : Progress.of("benchmarks", sections.size(), "sections", progressEvery)) {
                for (Map.Entry<String, Section> section : sections.entrySet()) {
                    if (!quiet) {
                        System.err.printf("benchmarks: %s (%d of %d)%n", section.getKey(), ++done, sections.size());
                    }
                    report.append(section.getValue().run());
                    progress.step();
                }
            }
            System.out.println(report);
        } finally {
            if (nats != null) {
                nats.close();
            }
            if (postgres != null) {
                postgres.close();
            }
            if (redis != null) {
                redis.close();
            }
        }
        System.exit(0); // Redisson and Lettuce leave non-daemon threads behind
    }

    private static String env(String name) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? null : value;
    }

    private static Map<String, Double> jmh(String include, boolean quick, int threads, String... params) throws RunnerException {
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(include)
                .threads(threads)
                .forks(1)
                .warmupIterations(quick ? 1 : 3)
                .warmupTime(TimeValue.seconds(quick ? 1 : 3))
                .measurementIterations(quick ? 2 : 5)
                .measurementTime(TimeValue.seconds(quick ? 1 : 3))
                .shouldFailOnError(true)
                .jvmArgsAppend("-D" + BenchServers.REDIS + "=" + System.getProperty(BenchServers.REDIS),
                        "-D" + BenchServers.PG + "=" + System.getProperty(BenchServers.PG),
                        "-D" + BenchServers.MARIADB + "=" + System.getProperty(BenchServers.MARIADB, ""));
        for (int i = 0; i + 1 < params.length; i += 2) {
            options.param(params[i], params[i + 1]);
        }
        Collection<RunResult> results = new Runner(options.build()).run();
        Map<String, Double> scores = new LinkedHashMap<>();
        for (RunResult result : results) {
            String name = result.getParams().getBenchmark();
            String method = name.substring(name.lastIndexOf('.') + 1);
            String param = result.getParams().getParamsKeys().isEmpty() ? ""
                    : "[" + String.join(",", result.getParams().getParamsKeys().stream().map(k -> result.getParams().getParam(k)).toList()) + "]";
            scores.put(method + param, result.getPrimaryResult().getScore());
        }
        return scores;
    }

    /** One section of the report, measured when run. */
    private interface Section {
        String run() throws Exception;
    }

    private static String leases(boolean quick, int threads) throws RunnerException {
        Map<String, Double> ops = jmh(LeaseBench.class.getName(), quick, threads);
        double floor = ops.get("floorSetNxNoToken");
        StringBuilder report = new StringBuilder();
        report.append("## Acquire + token + release, ").append(threads).append(threads == 1 ? " thread" : " threads").append("\n\n")
                .append("| variant | cycles/s | time per cycle vs the floor |\n|---|---:|---:|\n");
        for (String variant : List.of("floorSetNxNoToken", "fencedOneScript", "articleTwoSteps", "redissonFencedLock")) {
            double score = ops.get(variant);
            report.append(String.format("| %s | %,.0f | %.2fx |%n", variant, score, floor / score));
        }
        return report.append('\n').toString();
    }

    private static String tokens(boolean quick) throws RunnerException {
        Map<String, Double> ops = jmh(TokenSourceBench.class.getName(), quick, 1);
        double redisOps = ops.get("redisIssuedToken");
        double dbOps = ops.get("databaseIssuedToken");
        double sequenceOps = ops.get("databaseSequenceToken");
        return "## Token sources: lease + token + release\n\n| token issued by | cycles/s | time vs Redis-issued |\n|---|---:|---:|\n"
                + String.format("| Redis (one script) | %,.0f | 1.00x |%n", redisOps)
                + String.format("| PostgreSQL counter row (lease in Redis) | %,.0f | %.2fx |%n", dbOps, redisOps / dbOps)
                + String.format("| PostgreSQL sequence (lease in Redis) | %,.0f | %.2fx |%n%n", sequenceOps, redisOps / sequenceOps);
    }
}
