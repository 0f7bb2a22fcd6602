package dev.fenced.lab;

import dev.fenced.cli.UsageException;
import dev.fenced.cli.WorkerAdjustment;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementJournal;
import dev.fenced.settlement.SettlementWorker;
import dev.fenced.settlement.WorkerVariant;
import dev.fenced.stripe.StripeRefundGateway;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import picocli.CommandLine.Option;

/**
 * The lab's knobs on a worker command: a weaker mechanism for the comparison, a breakpoint where
 * the orchestrator freezes the process, and a start on cue. The adjustment of the hidden
 * {@code lab-settle} and {@code lab-worker} ({@link LabCommands}); the operator's commands have none of it.
 */
final class LabKnobs implements WorkerAdjustment {
    @Option(names = "--no-fence", description = "write without the fence predicate: the negative control")
    boolean noFence;

    @Option(names = "--no-renewal", description = "do not renew the lease: the TTL-only mechanism")
    boolean noRenewal;

    @Option(names = "--check-before-write", description = "GET the lease before every write")
    boolean checkBeforeWrite;

    @Option(names = "--no-journal-guard", description = "append to the journal without its guard: the journal's negative control")
    boolean noJournalGuard;

    @Option(names = "--pause-at", paramLabel = "PHASE:REFUND",
            description = "after-claim:r_815, after-gateway:r_815, before-confirm:r_815, in-claim:r_815 (inside the claim's transaction,"
                    + " its rows locked) or in-journal:m_4471: announce a breakpoint and wait for a line on stdin; once per process (a fleet"
                    + " worker may be handed the same job again)")
    String pauseAt;

    @Option(names = "--stall-claims-on-cue",
            description = "for the chaos run: each line 'arm' on stdin makes the next claim announce a breakpoint inside its transaction"
                    + " (its rows locked) and wait there for a line 'go'; 'disarm' takes an arm back")
    boolean stallClaimsOnCue;

    @Option(names = "--start-on-stdin", description = "wait for a line on stdin before taking the lease")
    boolean startOnStdin;

    @Option(names = "--stripe-api-base", paramLabel = "URL",
            description = "pay through Stripe's official library at this API base (the simulated gateway's Stripe surface), with the key"
                    + " in FENCED_STRIPE_API_KEY; needs --stripe-charges")
    URI stripeApiBase;

    @Option(names = "--stripe-charges", paramLabel = "FILE", description = "with --stripe-api-base: refund_id,charge_id lines, the charge each row refunds")
    Path stripeCharges;

    /** How long one call to Stripe may take. */
    private static final Duration STRIPE_TIMEOUT = Duration.ofSeconds(10);
    /** With --stripe-api-base: the gateway the worker pays through instead of the simulator's own API. */
    private StripeRefundGateway stripe;

    private final BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    private String[] breakpoint;
    /** A breakpoint stops once: the orchestrator sends one line, and a fleet worker handed the job again must not wait for another. */
    private final AtomicBoolean breakpointReached = new AtomicBoolean();
    /** With --stall-claims-on-cue: the next claim stops inside its transaction. */
    private final AtomicBoolean armed = new AtomicBoolean();
    private final Semaphore go = new Semaphore(0);
    private Thread cues;
    /** How long a stalled claim waits for its 'go' before it carries on anyway: an orchestrator that died must not leave it for ever. */
    private static final long STALL_LIMIT_MINUTES = 5;

    /** Checks the knobs before anything connects: a usage error touches nothing. */
    @Override
    public void validate() {
        if ((stripeApiBase == null) != (stripeCharges == null)) {
            throw new UsageException("--stripe-api-base and --stripe-charges go together");
        }
        if (stripeApiBase != null) {
            String key = System.getenv(StripeCharges.API_KEY_VARIABLE);
            if (key == null || key.isBlank()) {
                throw new UsageException("--stripe-api-base needs the Stripe API key in " + StripeCharges.API_KEY_VARIABLE);
            }
            try {
                stripe = StripeRefundGateway.builder().apiKey(key).apiBase(stripeApiBase)
                        .charges(StripeCharges.resolver(stripeCharges)).timeout(STRIPE_TIMEOUT).build();
            } catch (IllegalArgumentException e) {
                throw new UsageException("--stripe-api-base: " + e.getMessage());
            }
        }
        if (stallClaimsOnCue && (pauseAt != null || startOnStdin)) {
            throw new UsageException("--stall-claims-on-cue reads stdin for its cues: not with --pause-at or --start-on-stdin");
        }
        if (pauseAt == null) {
            return;
        }
        int colon = pauseAt.indexOf(':');
        String phase = colon < 0 ? "" : pauseAt.substring(0, colon).toUpperCase(Locale.ROOT).replace('-', '_');
        if (!phase.equals("AFTER_CLAIM") && !phase.equals("AFTER_GATEWAY") && !phase.equals("BEFORE_CONFIRM") && !phase.equals("IN_JOURNAL")
                && !phase.equals("IN_CLAIM")) {
            throw new UsageException("--pause-at must be after-claim:, after-gateway:, before-confirm:, in-claim:<refund> or"
                    + " in-journal:<merchant>, got " + pauseAt);
        }
        breakpoint = new String[] {phase, pauseAt.substring(colon + 1)};
    }

    WorkerVariant variant() {
        return LabVariants.of(!noFence, !noRenewal, checkBeforeWrite);
    }

    /**
     * The variant, the journal (without its guard for the control), and a phase hook that announces
     * the breakpoint through {@code print} and waits for a line on stdin.
     */
    @Override
    public SettlementWorker.Builder adjust(SettlementWorker.Builder builder, Context context) {
        if (noJournalGuard && context.journal() != null) {
            builder.journal(new UnguardedJournal(SettlementJournal.in(context.journal())));
        }
        if (stripe != null) {
            builder.gateway(stripe);
        }
        String worker = context.worker();
        Consumer<SettlementEvent> print = context.events();
        if (stallClaimsOnCue) {
            listenForCues();
        }
        return builder.variant(variant()).phaseHook((phase, refundId) -> {
            if (breakpoint != null && phase.name().equals(breakpoint[0]) && refundId.equals(breakpoint[1])
                    && breakpointReached.compareAndSet(false, true)) {
                print.accept(new SettlementEvent(SettlementEvent.Type.BREAKPOINT, worker, refundId, 0, pauseAt, System.currentTimeMillis()));
                readLine();
            }
            if (phase == SettlementWorker.Phase.IN_CLAIM && armed.compareAndSet(true, false)) {
                print.accept(new SettlementEvent(SettlementEvent.Type.BREAKPOINT, worker, refundId, 0, "in-claim:" + refundId,
                        System.currentTimeMillis()));
                try {
                    go.tryAcquire(STALL_LIMIT_MINUTES, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
    }

    /** Reads the cues on stdin, once per process: the jobs of a fleet worker share them. */
    private synchronized void listenForCues() {
        if (cues != null) {
            return;
        }
        cues = new Thread(() -> {
            try {
                String line;
                while ((line = stdin.readLine()) != null) {
                    switch (line.trim()) {
                        case "arm" -> armed.set(true);
                        case "disarm" -> armed.set(false);
                        case "go" -> go.release();
                        default -> { }
                    }
                }
            } catch (IOException closed) {
                // the orchestrator is gone: let a stalled claim go
            }
            armed.set(false);
            go.release(Integer.MAX_VALUE / 2);
        }, "lab-cues");
        cues.setDaemon(true);
        cues.start();
    }

    @Override
    public void beforeSettling() {
        if (startOnStdin) {
            readLine();
        }
    }

    private void readLine() {
        try {
            stdin.readLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
