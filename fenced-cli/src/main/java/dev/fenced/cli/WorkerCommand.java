package dev.fenced.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FencedObserver;
import dev.fenced.fleet.FleetWorker;
import dev.fenced.fleet.JobEvent;
import dev.fenced.fleet.JobStream;
import dev.fenced.fleet.SettlementJobs;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.settlement.RefundSummary;
import dev.fenced.settlement.SettlementListener;
import dev.fenced.settlement.SettlementWorker;
import io.nats.client.Connection;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "worker", mixinStandardHelpOptions = true,
        description = {"Run a long-lived settlement worker of the fleet.",
                "It takes settlement jobs from the JetStream stream and settles up to --jobs merchants at once, each under its own"
                        + " lease and token. SIGTERM or SIGINT drains: no new job, refunds in flight confirmed, leases released,"
                        + " unfinished jobs handed back; then exit 0.",
                "Exit codes: 0 drained, 1 runtime failure (e.g. NATS, Redis or the database unreachable at start), 2 usage error,"
                        + " 10 the drain outlasted --drain-time: the jobs still running are left to JetStream (no answer: redelivered"
                        + " after AckWait), and one line says how many, and how many of their refunds were left in sending.",
                "A job whose run met a database wait (a row lock another session kept past --lock-timeout) is handed back with a"
                        + " delay of --ack-wait, counted towards --max-deliver."})
public final class WorkerCommand implements Callable<Integer> {
    @Option(names = "--jobs", defaultValue = "4", description = "merchants settled at once (default ${DEFAULT-VALUE})")
    int jobs;

    @Option(names = "--concurrency", defaultValue = "8", description = "refunds in flight per job, under its one token (default ${DEFAULT-VALUE})")
    int concurrency;

    @Option(names = "--ttl", defaultValue = "30s", converter = DurationConverter.class, description = "lease TTL (default ${DEFAULT-VALUE})")
    Duration ttl;

    @Option(names = "--ack-wait", defaultValue = "30s", converter = DurationConverter.class,
            description = "a job's visibility timeout: a worker silent this long loses the job to another (default ${DEFAULT-VALUE})")
    Duration ackWait;

    @Option(names = "--max-deliver", defaultValue = "5", description = "deliveries of a failing job before it goes to the dead letters (default ${DEFAULT-VALUE})")
    int maxDeliver;

    @Option(names = "--drain-time", defaultValue = "25s", converter = DurationConverter.class,
            description = "how long a drain waits for the jobs in flight before it gives up on them and exits 10 (default ${DEFAULT-VALUE})")
    Duration drainTime;

    @Option(names = "--name", defaultValue = "worker", description = "this worker's name in events and lease owner ids")
    String name;

    @Option(names = "--events", description = "print every job and settlement event as a JSON line on stdout")
    boolean events;

    @Option(names = "--metrics-port", description = "serve the worker's meters for Prometheus at http://HOST:PORT/metrics (0: any free port)")
    Integer metricsPort;

    @Option(names = "--metrics-host", defaultValue = "127.0.0.1", description = "the address --metrics-port listens on (default ${DEFAULT-VALUE})")
    String metricsHost;

    @Mixin
    Connections connections;

    @Mixin
    DatabaseOptions databaseOptions;

    @Mixin
    DatabaseWaitOptions databaseWaits;

    @Mixin
    GatewayOptions gatewayOptions;

    @Mixin
    KeyRetentionOptions keyRetention;

    @Mixin
    GatewayCallOptions gatewayCalls;

    @Mixin
    JournalOptions journal;

    @Mixin
    NatsOptions nats;

    /** Null for the operator's command: {@code fenced worker} always builds the fenced worker. */
    private final WorkerAdjustment adjustment;

    WorkerCommand() {
        this(null);
    }

    private WorkerCommand(WorkerAdjustment adjustment) {
        this.adjustment = adjustment;
    }

    /**
     * This command under another name, hidden, the worker of each job changed by {@code adjustment},
     * whose options it takes besides worker's: for a {@link CommandSet} (the lab's {@code lab-worker}).
     */
    public static CommandSpec adjusted(String name, String description, WorkerAdjustment adjustment) {
        return AdjustedCommands.spec(new WorkerCommand(java.util.Objects.requireNonNull(adjustment, "adjustment")), name, description, adjustment);
    }

    @Override
    public Integer call() {
        if (adjustment != null) {
            adjustment.validate();
        }
        try {
            FleetWorker.requireValidJobs(jobs);
        } catch (IllegalArgumentException e) {
            throw UsageException.ofOption(e);
        }
        Connections.requireConcurrency(concurrency);
        Connections.requireUsableTtl(ttl);
        gatewayCalls.validate();
        if (drainTime.toMillis() < 100 || drainTime.compareTo(Duration.ofHours(1)) > 0) {
            throw new UsageException("--drain-time must be 100ms to 1h, got " + dev.fenced.internal.Durations.human(drainTime));
        }
        DatabaseWaits waits = databaseWaits.resolve(ttl);
        JobStream stream;
        try {
            stream = nats.streamBuilder().ackWait(ackWait).maxDeliver(maxDeliver).build();
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        nats.checkUrl();
        connections.requireLeaseSettings(); // before anything connects
        String dbUrl = databaseOptions.requireUrl();
        String gatewayUrl = gatewayOptions.requireUrl();
        GatewayClient gateway = gatewayCalls.client(gatewayUrl); // one client for every job; a malformed URL is a usage error now
        String owner = Connections.workerOwnerLabel(name);
        try (MetricsEndpoint metrics = metricsPort == null ? null : MetricsEndpoint.serve(metricsHost, metricsPort);
             HikariDataSource db = Connections.database(dbUrl, jobs * (concurrency + 2), waits);
             HikariDataSource journalDb = journal.open(jobs + 1, waits);
             OpenLeases leases = connections.openLeases(db, owner, metrics == null ? FencedObserver.NONE : metrics.observer());
             Connection broker = nats.connect("fenced-" + owner)) {
            // Built once before any job, so that a key retention its retries could outlive is refused at start.
            gatewayCalls.apply(keyRetention.apply(SettlementWorker.builder())).leaseStore(leases.store()).dataSource(db).gateway(gateway).build();
            SettlementJobs.configure(broker, stream);
            FleetWorker fleet = FleetWorker.builder().connection(broker).stream(stream).jobs(jobs)
                    .drainTime(drainTime)
                    .listener(this::print)
                    .workers(merchant -> adjusted(journal.apply(gatewayCalls.apply(keyRetention.apply(SettlementWorker.builder()))).leaseStore(leases.store()).dataSource(db)
                            .gateway(gateway).ttl(ttl).concurrency(concurrency).name(name)
                            .listener(jobListener(merchant, metrics)), merchant).build())
                    .build();
            FleetWorker.Summary summary;
            // The process's own deadline leaves the flush of the answers, the count below and the release of the stores 5 s.
            try (Drain drain = Drain.onSignal(drainTime.plusSeconds(5))) {
                if (!events) {
                    System.out.println("worker " + name + ": taking jobs from " + stream.stream() + " (" + jobs + " at once); SIGTERM drains");
                }
                if (metrics != null) {
                    // On stderr, so that --events keeps stdout to JSON lines.
                    System.err.println("worker " + name + ": metrics at http://" + metricsHost + ":" + metrics.port() + "/metrics");
                }
                summary = fleet.run(drain::requested);
            }
            if (summary.drainTimedOut()) {
                System.err.println("fenced worker: the drain gave up after " + dev.fenced.internal.Durations.human(drainTime) + " with "
                        + summary.unfinished().size() + (summary.unfinished().size() == 1 ? " job" : " jobs") + " still running ("
                        + String.join(", ", summary.unfinished()) + "): " + leftSending(db, summary.unfinished())
                        + "; left to JetStream, redelivered after AckWait");
                return Drain.TOO_SLOW; // the stores close now, under the jobs given up: their rows stay as they are for the next holder
            }
            if (!events) {
                System.out.println("worker " + name + " drained: " + summary.acked() + " jobs done, " + summary.retried() + " retried, "
                        + summary.handedBack() + " handed back, " + summary.left() + " left to another holder, "
                        + summary.deadLettered() + " dead-lettered; " + summary.settleMillis() + " ms settling, "
                        + summary.brokerMillis() + " ms with the broker");
            }
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return FencedCli.RUNTIME_FAILURE;
        }
    }

    /** The refunds the merchants' jobs left in sending (the next holder looks each one up), or why they could not be counted. */
    private static String leftSending(HikariDataSource db, java.util.List<String> merchants) {
        try {
            long sending = 0;
            for (String merchant : new java.util.TreeSet<>(merchants)) {
                sending += RefundSummary.of(db, merchant).count("sending");
            }
            return sending + (sending == 1 ? " refund" : " refunds") + " left in sending";
        } catch (RuntimeException e) {
            return "refunds left in sending unknown (" + e.getMessage() + ")";
        }
    }

    /** Event lines with --events, meters with --metrics-port. */
    private SettlementListener jobListener(String merchant, MetricsEndpoint metrics) {
        SettlementListener lines = event -> {
            if (events) {
                EventLines.event(event, merchant);
            }
        };
        return metrics == null ? lines : SettlementListener.all(lines, metrics.settlementListener());
    }

    private SettlementWorker.Builder adjusted(SettlementWorker.Builder builder, String merchant) {
        return adjustment == null ? builder : adjustment.adjust(builder, new WorkerAdjustment.Context(name, journal.dataSource(),
                event -> EventLines.event(event, merchant)));
    }

    private void print(JobEvent event) {
        if (events) {
            EventLines.job(event, name);
        } else if (event.type() != JobEvent.Type.RECEIVED) {
            System.out.println("job " + event.sequence() + " " + event.merchant() + " (delivery " + event.delivery() + "): "
                    + event.type().name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ') + ", " + event.detail());
        }
    }
}
