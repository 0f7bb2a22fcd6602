package dev.fenced.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FencedObserver;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSummary;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementOutcome;
import dev.fenced.settlement.SettlementWorker;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "settle", mixinStandardHelpOptions = true,
        description = {"Settle one merchant's refunds as one worker process, then exit.",
                "Exit codes: 0 finished the batch, 3 abandoned it on a fence violation, 4 the lease was held by someone else,"
                        + " 5 the lease was lost mid-batch, 6 the gateway was unavailable (refunds left pending or sending for the"
                        + " next run), 7 finished, but some refunds ended failed (refused by the gateway, for this run or for an"
                        + " earlier holder; see reconcile), 9 stopped by SIGTERM or SIGINT (what was in flight finished, the rest"
                        + " left for the next run), 11 the merchant's tokens come from another issuer than --tokens (see fenced"
                        + " tokens), 12 the merchant has no refunds at all (a mistyped id?), 15 a database wait ran out (a row lock"
                        + " another session kept past --lock-timeout: rows claimed but never sent put back, lease released),"
                        + " 1 runtime failure, 2 usage error."})
public final class SettleCommand implements Callable<Integer> {
    public static final int FENCE_VIOLATION = 3;
    public static final int LEASE_BUSY = 4;
    public static final int LEASE_LOST = 5;
    public static final int GATEWAY_UNAVAILABLE = 6;
    public static final int REJECTED = 7;
    public static final int STOPPED = 9;
    public static final int NO_REFUNDS = 12;
    public static final int DATABASE_WAIT = FencedCli.DATABASE_WAIT;

    @Option(names = "--merchant", required = true, description = "merchant id, e.g. m_4471")
    String merchant;

    @Option(names = "--ttl", defaultValue = "30s", converter = DurationConverter.class, description = "lease TTL (default ${DEFAULT-VALUE})")
    Duration ttl;

    @Option(names = "--concurrency", defaultValue = "1", description = "refunds in flight under the one token (default ${DEFAULT-VALUE})")
    int concurrency;

    @Option(names = "--name", defaultValue = "worker", description = "this worker's name in events and the lease owner id")
    String name;

    @Option(names = "--events", description = "print every event as a JSON line on stdout")
    boolean events;

    /** Progress on stderr; there is none with --events, whose reader is a program. */
    @Mixin
    ProgressOptions progressOptions;

    private volatile Progress progress = Progress.off();

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

    /** Null for the operator's command: {@code fenced settle} always builds the fenced worker. */
    private final WorkerAdjustment adjustment;

    SettleCommand() {
        this(null);
    }

    private SettleCommand(WorkerAdjustment adjustment) {
        this.adjustment = adjustment;
    }

    /**
     * This command under another name, hidden, its worker changed by {@code adjustment}, whose
     * options it takes besides settle's: for a {@link CommandSet} (the lab's {@code lab-settle}).
     */
    public static CommandSpec adjusted(String name, String description, WorkerAdjustment adjustment) {
        return AdjustedCommands.spec(new SettleCommand(java.util.Objects.requireNonNull(adjustment, "adjustment")), name, description, adjustment);
    }

    @Override
    public Integer call() {
        if (adjustment != null) {
            adjustment.validate();
        }
        Merchants.requireValid(merchant);
        Connections.requireUsableTtl(ttl);
        Connections.requireConcurrency(concurrency);
        gatewayCalls.validate();
        DatabaseWaits waits = databaseWaits.resolve(ttl);
        connections.requireLeaseSettings(); // before anything connects
        String dbUrl = databaseOptions.requireUrl();
        String gatewayUrl = gatewayOptions.requireUrl();
        try (HikariDataSource db = Connections.database(dbUrl, concurrency + 2, waits);
             HikariDataSource journalDb = journal.open(2, waits);
             OpenLeases leases = connections.openLeases(db, Connections.workerOwnerLabel(name), FencedObserver.NONE)) {
            SettlementWorker.Builder builder = gatewayCalls.apply(keyRetention.apply(SettlementWorker.builder()))
                    .leaseStore(leases.store()).dataSource(db).gateway(gatewayCalls.client(gatewayUrl))
                    .ttl(ttl).concurrency(concurrency).name(name).listener(this::print);
            builder = journal.apply(builder);
            if (adjustment != null) {
                builder = adjustment.adjust(builder, new WorkerAdjustment.Context(name, journal.dataSource(), this::print));
            }
            SettlementWorker worker = builder.build();
            if (adjustment != null) {
                adjustment.beforeSettling();
            }
            SettlementOutcome outcome;
            RefundSummary before = RefundSummary.of(db, merchant);
            long toSettle = before.count("pending") + before.count("sending");
            try (Drain drain = Drain.onSignal(Connections.DRAIN_TIME);
                 Progress shown = events ? Progress.off() : progressOptions.start("settle " + merchant, toSettle, "refunds")) {
                progress = shown;
                outcome = worker.settle(merchant, drain::requested);
            }
            report(outcome, before);
            return switch (outcome.result()) {
                case COMPLETED -> 0;
                case REJECTED -> REJECTED;
                case GATEWAY_UNAVAILABLE -> GATEWAY_UNAVAILABLE;
                case FENCE_VIOLATION -> FENCE_VIOLATION;
                case LEASE_BUSY -> LEASE_BUSY;
                case LEASE_LOST -> LEASE_LOST;
                case STOPPED -> STOPPED;
                case NO_REFUNDS -> NO_REFUNDS;
                case DATABASE_WAIT -> DATABASE_WAIT;
                case FAILED -> FencedCli.RUNTIME_FAILURE;
            };
        }
    }

    private void print(SettlementEvent event) {
        if (events) {
            EventLines.event(event, merchant);
        }
        switch (event.type()) {
            case CONFIRMED, FAILED, SKIPPED -> progress.step(); // a refund this run finished, or found finished
            default -> { }
        }
    }

    private void report(SettlementOutcome outcome, RefundSummary before) {
        if (events) {
            EventLines.result(outcome, name);
            return;
        }
        if (outcome.result() == SettlementOutcome.Result.NO_REFUNDS) {
            System.err.println("fenced settle: merchant " + merchant + " has no refunds at all (a mistyped id? 'fenced status --all' lists"
                    + " the merchants); nothing settled, no lease taken");
            return;
        }
        long already = before.count("sent") + before.count("settled") + before.count("returned") + before.count("failed");
        if (outcome.result() == SettlementOutcome.Result.COMPLETED && already > 0 && already == before.rowsByState().values().stream()
                .mapToLong(Long::longValue).sum()) {
            System.out.println("settle " + merchant + ": COMPLETED, nothing to settle: all " + already + " refunds were already finished"
                    + (before.count("failed") == 0 ? "" : ", " + before.count("failed") + " of them failed (see fenced reconcile)")
                    + (before.count("returned") == 0 ? "" : ", " + before.count("returned")
                    + " of them returned by the provider (see fenced reconcile)")
                    + " (token " + outcome.token() + ")");
            return;
        }
        System.out.println("settle " + merchant + ": " + outcome.result() + ", token " + outcome.token() + ", " + outcome.sent()
                + " sent (" + outcome.recovered() + " recovered), " + outcome.failed() + " failed, " + outcome.skipped()
                + " finished by an earlier holder" + (outcome.failedElsewhere() == 0 ? "" : " (" + outcome.failedElsewhere()
                + " of them failed: see fenced reconcile)") + ", " + outcome.left() + " left for the next run"
                + (outcome.violation() == null ? "" : "; " + outcome.violation().getMessage())
                + (outcome.error() == null ? "" : "; " + outcome.error()));
    }
}
