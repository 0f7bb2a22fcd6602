package dev.fenced.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FencedObserver;
import dev.fenced.StoreUnavailableException;
import dev.fenced.fleet.JobQueueStatus;
import dev.fenced.fleet.JobStream;
import dev.fenced.fleet.SettlementJobs;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.provider.GatewayException;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.internal.Redaction;
import dev.fenced.redis.LeaseSnapshot;
import dev.fenced.redis.StoreAuthenticationException;
import dev.fenced.redis.StoreTlsException;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSummary;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "status", mixinStandardHelpOptions = true,
        description = {"Show a merchant's lease, counter, refunds by state, highest fence and the gateway's view.",
                "With --all, one row per merchant instead, a page at a time (--limit, --offset), redrawn with --watch, then the"
                        + " workers holding the page's leases and, with --nats-url, the job stream.",
                "With Redis, the gateway or NATS unreachable it shows what it could read and says what it could not (exit 0);"
                        + " with the database unreachable there is nothing to show: one line, exit 1."})
final class StatusCommand implements Callable<Integer> {
    @Option(names = "--merchant", description = "merchant id, e.g. m_4471")
    String merchant;

    @Option(names = "--all", description = "one row per merchant: lease holder, time left, counter, rows by state, failures, highest fence")
    boolean all;

    @Option(names = "--limit", defaultValue = "50", description = "with --all: merchants per page (default ${DEFAULT-VALUE})")
    int limit;

    @Option(names = "--offset", defaultValue = "0", description = "with --all: merchants to skip (default ${DEFAULT-VALUE})")
    int offset;

    @Option(names = "--watch", converter = DurationConverter.class,
            description = "with --all: redraw every D (e.g. 2s) until Ctrl-C, in place on a terminal")
    Duration watch;

    /** For tests: stop after this many drawings. */
    @Option(names = "--watch-times", hidden = true)
    Integer watchTimes;

    @Option(names = "--json", description = "print one JSON document")
    boolean json;

    @Spec
    CommandSpec spec;

    @Mixin
    Connections connections;

    @Mixin
    DatabaseOptions databaseOptions;

    @Mixin
    GatewayOptions gatewayOptions;

    @Mixin
    NatsOptions nats;

    @Override
    public Integer call() throws Exception {
        if (all == (merchant != null)) {
            throw new UsageException("give --merchant M, or --all");
        }
        if (all) {
            return board();
        }
        if (watch != null) {
            throw new UsageException("--watch goes with --all");
        }
        String resource = Merchants.resource(merchant);
        connections.requireLeaseSettings(); // before anything connects
        String dbUrl = databaseOptions.requireUrl();
        // A malformed gateway URL is a mistake, found now; an unreachable gateway is an outage, shown below.
        GatewayClient gateway = gatewayOptions.gatewayUrl == null || gatewayOptions.gatewayUrl.isBlank() ? null
                : Connections.gateway(gatewayOptions.gatewayUrl);
        LeaseSnapshot lease = null;
        String leaseUnknown = null;
        RefundSummary refunds;
        // Without the database there is nothing to show: one line, exit 1. Without Redis or the gateway the
        // rows are still worth seeing in an outage, when an operator needs them most: shown, with what is unknown.
        try (HikariDataSource db = Connections.readOnlyDatabase(dbUrl, 2)) {
            MigrateCommand.requireSchema(db);
            refunds = RefundSummary.of(db, merchant);
            try (OpenLeases leases = connections.openLeasesUnchecked(db, null, FencedObserver.NONE)) {
                lease = leases.snapshot(resource);
            } catch (StoreUnavailableException e) {
                leaseUnknown = outage(e);
            }
        }
        Integer gatewayRefunds = null;
        Long gatewayDuplicates = null;
        String gatewayUnknown = null;
        if (gateway != null) {
            try {
                List<GatewayRefund> ledger = gateway.ledger().stream()
                        .filter(r -> r.merchant().equals(merchant)).toList();
                gatewayRefunds = ledger.size();
                gatewayDuplicates = ledger.size() - ledger.stream().map(GatewayRefund::reference).distinct().count();
            } catch (GatewayException e) {
                gatewayUnknown = e.getMessage(); // names the gateway and why, its URL scrubbed
            }
        }
        JobStreamView jobs = jobStream();
        StatusReport report = new StatusReport(merchant, lease == null ? null : lease.holder(),
                lease == null ? null : lease.timeLeft().toMillis(), lease == null ? null : lease.counter(), refunds.rowsByState(),
                refunds.highestFence(), refunds.totalAmount().toPlainString(), gatewayRefunds, gatewayDuplicates, jobs.status(),
                jobs.unknown(), lease == null ? null : connections.tokensShown(lease),
                lease == null ? null : connections.tokensProblem(lease, refunds.highestFence()),
                leaseUnknown, gatewayUnknown);
        if (json) {
            System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report));
        } else {
            System.out.print(report.text() + retryLine(jobs.status()));
        }
        return 0;
    }

    /**
     * With dead letters, the command that retries them, on this status's NATS and stream: the URL
     * only when given as an option (the variable applies to both), without its credentials.
     */
    private String retryLine(JobQueueStatus jobs) {
        if (jobs == null || jobs.deadLetters() == 0) {
            return "";
        }
        StringBuilder command = new StringBuilder("fenced requeue");
        if (spec.commandLine().getParseResult().hasMatchedOption("--nats-url") && nats.given()) {
            command.append(" --nats-url ").append(Redaction.describe(nats.natsUrl));
        }
        if (!nats.stream.equals(JobStream.defaults().stream())) {
            command.append(" --stream ").append(nats.stream);
        }
        return "retry the dead letters: " + command + System.lineSeparator();
    }

    /**
     * What an unreachable Redis leaves unknown; a TLS handshake or credentials Redis refuses are a
     * mistake in the settings, not an outage, and stay one line and exit 1.
     */
    static String outage(StoreUnavailableException e) {
        if (e instanceof StoreTlsException || e instanceof StoreAuthenticationException) {
            throw e;
        }
        return e.getMessage();
    }

    /** The job stream with --nats-url: its state, or why it cannot be shown; neither without NATS. */
    record JobStreamView(JobQueueStatus status, String unknown) {
        static final JobStreamView NONE = new JobStreamView(null, null);
    }

    private JobStreamView jobStream() throws InterruptedException {
        if (!nats.given()) {
            return JobStreamView.NONE;
        }
        nats.checkUrl();
        JobStream stream = nats.streamBuilder().build();
        try (io.nats.client.Connection broker = nats.connect("fenced-status")) {
            return SettlementJobs.statusOf(broker, stream).map(status -> new JobStreamView(status, null))
                    .orElse(new JobStreamView(null, "no stream " + stream.stream()));
        } catch (StoreUnavailableException e) {
            return new JobStreamView(null, "unavailable: " + e.getMessage()); // a read-only view degrades, it does not fail
        }
    }

    private int board() throws Exception {
        if (limit < 1 || limit > 1_000) {
            throw new UsageException("--limit must be 1 to 1000, got " + limit);
        }
        if (offset < 0) {
            throw new UsageException("--offset must not be negative, got " + offset);
        }
        if (watch != null && watch.toMillis() < 100) {
            throw new UsageException("--watch must be at least 100ms, got " + dev.fenced.internal.Durations.human(watch));
        }
        connections.requireLeaseSettings(); // before anything connects
        String dbUrl = databaseOptions.requireUrl();
        nats.checkUrl();
        boolean terminal = System.console() != null && !json;
        ObjectMapper mapper = new ObjectMapper();
        OpenLeases leases = null;
        try (HikariDataSource db = Connections.readOnlyDatabase(dbUrl, 2)) {
            MigrateCommand.requireSchema(db);
            for (int drawn = 1; ; drawn++) {
                JobStreamView jobs = jobStream();
                String leasesUnknown = null;
                if (leases == null) {
                    try {
                        leases = connections.openLeasesUnchecked(db, null, FencedObserver.NONE); // again at each drawing until the store answers
                    } catch (StoreUnavailableException e) {
                        leasesUnknown = outage(e);
                    }
                }
                StatusBoard.Page page = StatusBoard.read(db, leases, leasesUnknown, connections, offset, limit, jobs.status(),
                        jobs.unknown());
                if (json) {
                    System.out.println(mapper.writeValueAsString(page)); // one document per line, also when watching
                } else {
                    // On a terminal, redraw in place (cursor home, clear); elsewhere one board after another.
                    System.out.print((terminal ? "\033[H\033[2J" : "") + StatusBoard.text(page) + retryLine(jobs.status()));
                }
                System.out.flush();
                if (watch == null || (watchTimes != null && drawn >= watchTimes)) {
                    return 0;
                }
                Thread.sleep(watch.toMillis());
            }
        } finally {
            if (leases != null) {
                leases.close();
            }
        }
    }
}
