package dev.fenced.lab;

import dev.fenced.cli.JournalOptions;
import dev.fenced.cli.UsageException;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementJournal;
import dev.fenced.settlement.SettlementWorker;
import dev.fenced.settlement.WorkerVariant;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.function.Consumer;
import picocli.CommandLine.Option;

/**
 * The lab's knobs on a worker command: a weaker mechanism for the comparison, a breakpoint where
 * the orchestrator freezes the process, and a start on cue. A mixin of the hidden
 * {@code lab-settle} and {@code lab-worker}; the operator's commands have none of it.
 */
final class LabKnobs {
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
                    + " its rows locked) or in-journal:m_4471: announce a breakpoint and wait for a line on stdin")
    String pauseAt;

    @Option(names = "--start-on-stdin", description = "wait for a line on stdin before taking the lease")
    boolean startOnStdin;

    private final BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    private String[] breakpoint;

    /** Checks the knobs before anything connects: a usage error touches nothing. */
    void validate() {
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
    SettlementWorker.Builder apply(SettlementWorker.Builder builder, JournalOptions journal, String worker, Consumer<SettlementEvent> print) {
        if (noJournalGuard && journal.dataSource() != null) {
            builder.journal(new UnguardedJournal(SettlementJournal.in(journal.dataSource())));
        }
        return builder.variant(variant()).phaseHook((phase, refundId) -> {
            if (breakpoint != null && phase.name().equals(breakpoint[0]) && refundId.equals(breakpoint[1])) {
                print.accept(new SettlementEvent(SettlementEvent.Type.BREAKPOINT, worker, refundId, 0, pauseAt, System.currentTimeMillis()));
                readLine();
            }
        });
    }

    void awaitStartCue() {
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
