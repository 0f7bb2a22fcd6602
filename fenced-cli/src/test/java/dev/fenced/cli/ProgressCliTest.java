package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.testing.servers.TestDatabases;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The operator's long commands without a terminal: a progress line on stderr at a steady interval,
 * counting up, then a last line when the command ends; nothing with {@code --quiet}; stdout keeps
 * only the result. (settle is checked in {@link MoneyCliTest}, compare and chaos in the lab's
 * tests, the benchmarks in theirs.)
 */
class ProgressCliTest {
    private static final String DB = TestDatabases.postgresUrl();

    private static String merchant() {
        return "m_p" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** The counts of the periodic lines, after checking that stderr holds nothing else and ends with the last line. */
    private static List<Long> progress(CliRun run, String task, long total, String unit) {
        Pattern periodic = Pattern.compile(Pattern.quote(task) + ": (\\d+)/" + total + " " + unit + " \\((\\d+) %\\), \\d+\\.\\d/s(, about \\d+ s left)?");
        Pattern last = Pattern.compile(Pattern.quote(task) + ": " + total + "/" + total + " " + unit + " in \\d+\\.\\d s");
        List<String> lines = run.stderr().strip().lines().toList();
        assertThat(lines).as(run.stderr()).allMatch(l -> periodic.matcher(l).matches() || last.matcher(l).matches());
        assertThat(lines.get(lines.size() - 1)).matches(last);
        List<Long> counts = lines.stream().map(periodic::matcher).filter(Matcher::matches).map(m -> Long.parseLong(m.group(1))).toList();
        assertThat(counts).as(run.stderr()).hasSizeGreaterThanOrEqualTo(2).isSorted();
        return counts;
    }

    @Test
    void seedOfALargeCountReportsTheRowsInserted() {
        String merchant = merchant();
        CliRun run = CliRun.of("seed", "--merchant", merchant, "--refunds", "200000", "--total", "2000000.00", "--id-prefix", merchant + "_r",
                "--progress-every", "100ms", "--db-url", DB);
        assertThat(run.exit()).as(run.both()).isZero();
        progress(run, "seed " + merchant, 200_000, "refunds inserted");
        assertThat(run.stdout()).isEqualTo("seeded " + merchant + ": 200000 refunds, 2000000.00 EUR\n");

        String quiet = merchant();
        CliRun silent = CliRun.of("seed", "--quiet", "--merchant", quiet, "--refunds", "20000", "--total", "200000.00", "--id-prefix",
                quiet + "_r", "--progress-every", "10ms", "--db-url", DB);
        assertThat(silent.exit()).as(silent.both()).isZero();
        assertThat(silent.stderr()).isEmpty();
    }

    /** Rows left in sending are each looked up at the gateway under their key: that is what takes reconcile its time. */
    @Test
    void reconcileReportsTheRowsCompared() throws Exception {
        String merchant = merchant();
        assertThat(CliRun.of("seed", "--merchant", merchant, "--refunds", "300", "--total", "3000.00", "--id-prefix", merchant + "_r",
                "--db-url", DB).exit()).isZero();
        try (Connection c = DriverManager.getConnection(DB);
             PreparedStatement inDoubt = c.prepareStatement("UPDATE refund SET state = 'sending', fence = 1 WHERE merchant = ?")) {
            inDoubt.setString(1, merchant); // as a worker that claimed them and stopped before an answer would leave them
            inDoubt.executeUpdate();
        }
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(3)).build())) {
            CliRun run = CliRun.of("reconcile", "--merchant", merchant, "--progress-every", "100ms", "--db-url", DB, "--gateway-url",
                    gateway.url());
            assertThat(run.exit()).as("every row in doubt is a discrepancy: " + run.both()).isEqualTo(ReconcileCommand.DISCREPANCIES);
            progress(run, "reconcile " + merchant, 300, "rows");
            assertThat(run.stdout()).startsWith("reconcile " + merchant + ": 300 rows");

            CliRun silent = CliRun.of("reconcile", "--quiet", "--merchant", merchant, "--progress-every", "10ms", "--db-url", DB,
                    "--gateway-url", gateway.url());
            assertThat(silent.exit()).isEqualTo(ReconcileCommand.DISCREPANCIES);
            assertThat(silent.stderr()).isEmpty();
        }
    }
}
