package dev.fenced.lab;

import dev.fenced.cli.SettleCommand;
import dev.fenced.cli.UsageException;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementWorker;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The operator's {@code settle} with the lab's knobs: a weaker mechanism for the comparison, a
 * breakpoint where the orchestrator freezes the process, and a start on cue. Hidden: only the
 * lab's orchestrators start it.
 */
@Command(name = "lab-settle", hidden = true, description = "settle, under a mechanism of the comparison, with breakpoints; for the lab")
final class LabSettleCommand extends SettleCommand {
    @Option(names = "--no-fence", description = "write without the fence predicate: the negative control")
    boolean noFence;

    @Option(names = "--no-renewal", description = "do not renew the lease: the TTL-only mechanism")
    boolean noRenewal;

    @Option(names = "--check-before-write", description = "GET the lease before every write")
    boolean checkBeforeWrite;

    @Option(names = "--pause-at", paramLabel = "PHASE:REFUND",
            description = "after-claim:r_815, after-gateway:r_815 or before-confirm:r_815: announce a breakpoint and wait for a line on stdin")
    String pauseAt;

    @Option(names = "--start-on-stdin", description = "wait for a line on stdin before taking the lease")
    boolean startOnStdin;

    private final BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    private String[] breakpoint;

    @Override
    public Integer call() {
        breakpoint = parseBreakpoint(); // before any connection: a usage error touches nothing
        return super.call();
    }

    @Override
    protected SettlementWorker.Builder adapt(SettlementWorker.Builder builder) {
        return builder.variant(LabVariants.of(!noFence, !noRenewal, checkBeforeWrite))
                .phaseHook((phase, refundId) -> {
                    if (breakpoint != null && phase.name().equals(breakpoint[0]) && refundId.equals(breakpoint[1])) {
                        print(new SettlementEvent(SettlementEvent.Type.BREAKPOINT, name(), refundId, 0, pauseAt, System.currentTimeMillis()));
                        readLine();
                    }
                });
    }

    @Override
    protected void beforeSettling() {
        if (startOnStdin) {
            readLine();
        }
    }

    private String[] parseBreakpoint() {
        if (pauseAt == null) {
            return null;
        }
        int colon = pauseAt.indexOf(':');
        String phase = colon < 0 ? "" : pauseAt.substring(0, colon).toUpperCase(Locale.ROOT).replace('-', '_');
        if (!phase.equals("AFTER_CLAIM") && !phase.equals("AFTER_GATEWAY") && !phase.equals("BEFORE_CONFIRM")) {
            throw new UsageException("--pause-at must be after-claim:, after-gateway: or before-confirm:<refund>, got " + pauseAt);
        }
        return new String[] {phase, pauseAt.substring(colon + 1)};
    }

    private void readLine() {
        try {
            stdin.readLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
