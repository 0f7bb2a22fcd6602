package dev.fenced.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementOutcome;
import dev.fenced.settlement.SettlementWorker;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "settle", mixinStandardHelpOptions = true,
        description = {"Settle one merchant's refunds as one worker process, then exit.",
                "Exit codes: 0 finished the batch, 3 abandoned it on a fence violation, 4 the lease was held by someone else,",
                "5 the lease was lost mid-batch, 6 the gateway was unavailable (refunds left pending or sending for the next run),",
                "7 finished, but the gateway refused some refunds (marked failed; see reconcile), 1 runtime failure, 2 usage error."})
final class SettleCommand implements Callable<Integer> {
    static final int FENCE_VIOLATION = 3;
    static final int LEASE_BUSY = 4;
    static final int LEASE_LOST = 5;
    static final int GATEWAY_UNAVAILABLE = 6;
    static final int REJECTED = 7;

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

    @Option(names = "--no-fence", hidden = true, description = "write without the fence predicate: the negative control, never for real use")
    boolean noFence;

    @Option(names = "--no-renewal", hidden = true, description = "do not renew the lease: the TTL-only mechanism, for comparison")
    boolean noRenewal;

    @Option(names = "--check-before-write", hidden = true, description = "GET the lease before every write, for comparison")
    boolean checkBeforeWrite;

    @Option(names = "--pause-at", hidden = true, paramLabel = "PHASE:REFUND",
            description = "after-claim:r_815, after-gateway:r_815 or before-confirm:r_815: announce a breakpoint and wait for a line on stdin")
    String pauseAt;

    @Option(names = "--start-on-stdin", hidden = true, description = "wait for a line on stdin before taking the lease")
    boolean startOnStdin;

    @Mixin
    Connections connections;

    private final BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

    @Override
    public Integer call() {
        Merchants.requireValid(merchant);
        Connections.requireUsableTtl(ttl);
        if (concurrency < 1 || concurrency > 256) {
            throw new UsageException("--concurrency must be 1 to 256, got " + concurrency);
        }
        String[] breakpoint = parseBreakpoint();
        String redisUrl = Connections.require(connections.redisUrl, "--redis-url", "FENCED_REDIS_URL");
        String dbUrl = Connections.require(connections.dbUrl, "--db-url", "FENCED_DB_URL");
        String gatewayUrl = Connections.require(connections.gatewayUrl, "--gateway-url", "FENCED_GATEWAY_URL");
        try (HikariDataSource db = Connections.database(dbUrl, concurrency + 2);
             RedisLeaseStore leases = Connections.leases(redisUrl, db, "worker-" + name.replaceAll("[^A-Za-z0-9_-]", "_"))) {
            SettlementWorker worker = SettlementWorker.builder()
                    .leaseStore(leases).dataSource(db).gateway(Connections.gateway(gatewayUrl))
                    .ttl(ttl).concurrency(concurrency).fencing(!noFence).renewal(!noRenewal).checkBeforeWrite(checkBeforeWrite).name(name)
                    .listener(this::print)
                    .phaseHook((phase, refundId) -> {
                        if (breakpoint != null && phase.name().equals(breakpoint[0]) && refundId.equals(breakpoint[1])) {
                            waitAtBreakpoint(refundId);
                        }
                    })
                    .build();
            if (startOnStdin) {
                readLine();
            }
            SettlementOutcome outcome = worker.settle(merchant);
            report(outcome);
            return switch (outcome.result()) {
                case COMPLETED -> 0;
                case REJECTED -> REJECTED;
                case GATEWAY_UNAVAILABLE -> GATEWAY_UNAVAILABLE;
                case FENCE_VIOLATION -> FENCE_VIOLATION;
                case LEASE_BUSY -> LEASE_BUSY;
                case LEASE_LOST -> LEASE_LOST;
                case FAILED -> FencedCli.RUNTIME_FAILURE;
            };
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

    private void waitAtBreakpoint(String refundId) {
        print(new SettlementEvent("breakpoint", name, refundId, 0, pauseAt, System.currentTimeMillis()));
        readLine();
    }

    private void readLine() {
        try {
            stdin.readLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void print(SettlementEvent event) {
        if (events) {
            EventLines.event(event, merchant);
        }
    }

    private void report(SettlementOutcome outcome) {
        if (events) {
            EventLines.result(outcome, name);
            return;
        }
        System.out.println("settle " + merchant + ": " + outcome.result() + ", token " + outcome.token() + ", " + outcome.sent()
                + " sent (" + outcome.recovered() + " recovered), " + outcome.failed() + " failed, " + outcome.skipped()
                + " finished by an earlier holder, " + outcome.left() + " left for the next run"
                + (outcome.violation() == null ? "" : "; " + outcome.violation().getMessage())
                + (outcome.error() == null ? "" : "; " + outcome.error()));
    }
}
