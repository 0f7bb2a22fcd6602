package dev.fenced.lab;

import dev.fenced.cli.DatabaseOptions;
import dev.fenced.cli.LeaseBackend;
import dev.fenced.cli.UsageException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.util.StringJoiner;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Replay the article's worked example with real processes.",
                "Worker A (token 33) is frozen with SIGSTOP after claiming r_815, its lease expires, worker B (token 34) takes"
                        + " over, A is resumed and refused.",
                "Starts an embedded redis-server and PostgreSQL unless --redis-url / --db-url (or FENCED_REDIS_URL /"
                        + " FENCED_DB_URL) name fresh ones; --embedded starts them whatever the environment says. Says which it uses.",
                "--leases database tells the same story with the leases in PostgreSQL and no Redis; --leases etcd with an embedded"
                        + " etcd (Debian's etcd-server) unless --etcd-url names a fresh one.",
                "--provider stripe pays through Stripe's official library against the simulated gateway's Stripe surface: a charge"
                        + " per refund, refunds pending until they settle, news by signed webhook; r_1100's card was closed, so its refund"
                        + " succeeds and then fails, and its row ends returned."})
final class DemoCommand implements Callable<Integer> {
    @Option(names = "--speed", defaultValue = "10", description = "divide every time by this (default ${DEFAULT-VALUE}; 1 is the article's 30 s TTL)")
    double speed;

    @Option(names = "--json", description = "print one JSON document instead of the timeline")
    boolean json;

    @Option(names = "--no-fence", description = "the same story with fencing off: the negative control")
    boolean noFence;

    @Option(names = "--embedded", description = "embedded servers, even when FENCED_REDIS_URL, FENCED_ETCD_URL or FENCED_DB_URL is set")
    boolean embedded;

    @Option(names = "--leases", paramLabel = "redis|database|etcd", defaultValue = "${env:FENCED_LEASES:-redis}",
            converter = LeaseBackend.Converter.class,
            description = "where the workers' leases and tokens live (env FENCED_LEASES; default ${DEFAULT-VALUE})")
    LeaseBackend leases;

    @Option(names = "--etcd-url", paramLabel = "URLS", defaultValue = "${env:FENCED_ETCD_URL}",
            description = "with --leases etcd: a fresh etcd instead of an embedded one, http://host:port[,...] (env FENCED_ETCD_URL)")
    String etcdUrl;

    @Option(names = "--provider", paramLabel = "simulator|stripe", defaultValue = "simulator", converter = ProviderConverter.class,
            description = "how the workers pay: the simulated gateway's own API, or Stripe's official library (default ${DEFAULT-VALUE})")
    Scenario.Provider provider;

    @Spec
    CommandSpec spec;

    /** simulator or stripe, in any case; anything else is a one-line usage error. */
    static final class ProviderConverter implements picocli.CommandLine.ITypeConverter<Scenario.Provider> {
        @Override
        public Scenario.Provider convert(String value) {
            return switch (value.trim().toLowerCase(java.util.Locale.ROOT)) {
                case "simulator" -> Scenario.Provider.SIMULATOR;
                case "stripe" -> Scenario.Provider.STRIPE;
                default -> throw new picocli.CommandLine.TypeConversionException("--provider must be simulator or stripe, got " + value);
            };
        }
    }

    // Its own option, not the Connections mixin: the story takes no TLS files and always has Redis issue the tokens.
    @Option(names = "--redis-url", paramLabel = "URL", defaultValue = "${env:FENCED_REDIS_URL}",
            description = "a fresh Redis instead of an embedded redis-server: redis://[user:password@]host:port or rediss://... (env FENCED_REDIS_URL)")
    String redisUrl;

    @Mixin
    DatabaseOptions databaseOptions;

    @Override
    public Integer call() throws Exception {
        Scenario.requireValidSpeed(speed); // before the banner: a usage error prints one line and nothing else
        ScenarioServers.Source leaseSource = switch (leases) {
            case REDIS -> source(redisUrl, "--redis-url", "FENCED_REDIS_URL");
            case ETCD -> source(etcdUrl, "--etcd-url", "FENCED_ETCD_URL");
            case DATABASE -> ScenarioServers.Source.EMBEDDED;
        };
        ScenarioServers.Source db = source(databaseOptions.dbUrl, "--db-url", "FENCED_DB_URL");
        if (!json) {
            System.out.println("fenced demo: merchant m_4471, 1,200 refunds, 84,300.00 EUR, fencing " + (noFence ? "OFF" : "on")
                    + ", speed x" + speed + (leases == LeaseBackend.REDIS ? "" : ", leases in " + leases.label())
                    + (provider == Scenario.Provider.STRIPE ? ", paid through Stripe's official library" : ""));
        }
        Mechanism mechanism = noFence ? Mechanism.FENCE_IDEMPOTENT.withoutFence() : Mechanism.FENCE_IDEMPOTENT;
        Scenario scenario = new Scenario(speed, mechanism, Scenario.Story.ARTICLE, json ? null : System.out, provider);
        DemoReport report;
        try (ScenarioServers servers = ScenarioServers.start(leases, leaseSource, db, json ? null : System.out)) {
            report = scenario.run(servers);
        }
        if (json) {
            System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report));
            return 0;
        }
        System.out.println();
        System.out.println("timeline (elapsed, worker, event, refund, token):");
        for (TimelineEntry e : report.timeline()) {
            System.out.printf("  %7.2fs  %-4s %-11s %-6s %-4s %s%n", e.elapsedMs() / 1000.0, e.worker(), e.event(),
                    e.refund() == null ? "" : e.refund(), e.token() == 0 ? "" : e.token(), e.detail() == null ? "" : e.detail());
        }
        System.out.println();
        System.out.println("tally:");
        tally("refunds", report.refunds());
        tally("uniqueReferences", report.uniqueReferences());
        tally("totalAmount", report.totalAmount());
        tally("duplicates", report.duplicates());
        tally("r815", "{amount=" + report.stalledRefund().amount() + ", refunds=" + report.stalledRefund().refunds() + "}");
        tally("staleWritesAccepted", report.staleWritesAccepted());
        tally("workerA", brief(report.workerA()));
        tally("workerB", brief(report.workerB()));
        tally("rowsByState", report.rowsByState());
        if (report.news() != null) {
            DemoReport.ProviderNews news = report.news();
            tally("webhooks", news.deliveries());
            tally("returned", news.returned());
            tally("byPoll", news.byPoll());
        }
        return 0;
    }

    private static void tally(String name, Object value) {
        System.out.printf("  %-20s %s%n", name, value);
    }

    /** A worker's summary as one line, with the refusal only when there was one. */
    private static String brief(WorkerSummary worker) {
        StringJoiner out = new StringJoiner(", ", "{", "}").add("token=" + worker.token()).add("outcome=" + worker.outcome());
        if (worker.refusedAt() != null) {
            out.add("storedFence=" + worker.storedFence()).add("refusedAt=" + worker.refusedAt());
        }
        return out.add("confirmed=" + worker.confirmed()).add("staleWritesAccepted=" + worker.staleWritesAccepted())
                .add("exitCode=" + worker.exitCode()).toString();
    }

    /** A server given by its option, else by its environment variable, else embedded; always embedded with --embedded. */
    private ScenarioServers.Source source(String url, String option, String variable) {
        boolean byOption = spec.commandLine().getParseResult().hasMatchedOption(option);
        if (embedded) {
            if (byOption) {
                throw new UsageException("--embedded starts its own servers: give it without " + option);
            }
            return ScenarioServers.Source.EMBEDDED;
        }
        if (url == null || url.isBlank()) {
            return ScenarioServers.Source.EMBEDDED;
        }
        return new ScenarioServers.Source(url, byOption ? option : variable);
    }
}
