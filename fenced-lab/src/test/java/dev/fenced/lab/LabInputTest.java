package dev.fenced.lab;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.cli.CliRun;
import dev.fenced.cli.CommandSummaryTest;
import dev.fenced.cli.FencedCli;
import dev.fenced.cli.UsageOptionsTest;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The lab's commands on the command line: found through the service loader, and bad input is one line. */
class LabInputTest {

    /** The demo's banner is not printed before a usage error: stdout stays empty. */
    @Test
    void aUsageErrorPrintsNothingElse() {
        CliRun run = CliRun.of("demo", "--speed", "-3");
        assertThat(run.exit()).isEqualTo(FencedCli.USAGE);
        assertThat(run.oneLineError()).as(run.stderr()).isTrue();
        assertThat(run.stdout()).isEmpty();
        assertThat(run.stderr()).startsWith("fenced demo: ").contains("--speed");
        assertThat(CliRun.of("demo", "--speed", "0").stderr()).contains("--speed");
        CliRun provider = CliRun.of("demo", "--provider", "paypal");
        assertOneLineUsageError(provider, "--provider must be simulator or stripe, got paypal");
    }

    /** The lab worker's Stripe options go together, and a missing key is a usage error before anything connects. */
    @Test
    void theLabWorkersStripeOptionsAreCheckedBeforeAnythingConnects() {
        CliRun alone = CliRun.of("lab-settle", "--merchant", "m_1", "--db-url", "jdbc:postgresql://127.0.0.1:1/x", "--gateway-url",
                "http://127.0.0.1:1", "--stripe-api-base", "http://127.0.0.1:1");
        assertThat(alone.exit()).isEqualTo(FencedCli.USAGE);
        assertThat(alone.stderr()).contains("--stripe-api-base and --stripe-charges go together");
        if (System.getenv("FENCED_STRIPE_API_KEY") != null) {
            return; // the process's own key would be taken: the missing-key case cannot be run here
        }
        CliRun noKey = CliRun.of("lab-settle", "--merchant", "m_1", "--db-url", "jdbc:postgresql://127.0.0.1:1/x", "--gateway-url",
                "http://127.0.0.1:1", "--stripe-api-base", "http://127.0.0.1:1", "--stripe-charges", "/nonexistent/charges.csv");
        assertOneLineUsageError(noKey, "needs the Stripe API key in FENCED_STRIPE_API_KEY");
    }

    /** key-expiry runs on its own, one refund in flight per job, and its control only with it: one line each, exit 2, before any server starts. */
    @Test
    void keyExpiryRunsAloneAndItsControlOnlyWithIt() {
        CliRun combined = CliRun.of("chaos", "--faults", "key-expiry,pause");
        assertOneLineUsageError(combined, "key-expiry runs on its own");
        CliRun control = CliRun.of("chaos", "--faults", "pause", "--trust-keys");
        assertOneLineUsageError(control, "--trust-keys is the control of --faults key-expiry");
        CliRun ahead = CliRun.of("chaos", "--faults", "key-expiry", "--concurrency", "2");
        assertOneLineUsageError(ahead, "key-expiry runs with --concurrency 1");
    }

    /** clock-jump's Redis is one server under libfaketime: not with the faults of a Sentinel group or a Cluster. */
    @Test
    void clockJumpIsNotWithTheSentinelsOrTheClustersFaults() {
        for (String other : new String[] {"failover", "cluster-failover"}) {
            CliRun run = CliRun.of("chaos", "--faults", "clock-jump," + other);
            assertOneLineUsageError(run, "clock-jump runs on one Redis under libfaketime");
        }
    }

    /** A partition from Redis needs the leases in Redis; a misspelt partition fault names the five that exist. */
    @Test
    void partitionFaultsAreCheckedBeforeAnythingStarts() {
        assertOneLineUsageError(CliRun.of("chaos", "--faults", "partition-redis", "--leases", "database"),
                "partition-redis strikes Redis: not with --leases database");
        assertOneLineUsageError(CliRun.of("chaos", "--faults", "partition-postgres"),
                "partition-redis, partition-db, partition-gateway, partition-nats, isolate");
    }

    /** --async-replication is db-failover's control: not without it. */
    @Test
    void asyncReplicationGoesWithTheDatabaseFailover() {
        assertOneLineUsageError(CliRun.of("chaos", "--async-replication", "--faults", "pause"),
                "--async-replication is the control of --faults db-failover");
    }

    /** The hidden worker commands are not offered to a user who mistypes a command. */
    @Test
    void anUnknownCommandListsTheLabsCommandsButNotItsWorkers() {
        CliRun run = CliRun.of("demox");
        assertThat(run.exit()).isEqualTo(FencedCli.USAGE);
        assertThat(run.stderr()).contains("demo", "compare", "chaos", "settle").doesNotContain("lab-settle", "lab-worker");
    }

    /** demo takes a lease store's URL but none of the operator's TLS or --tokens options, which its story ignores; compare takes no server. */
    @Test
    void eachLabCommandListsOnlyTheConnectionOptionsItUses() {
        Map<String, Set<String>> uses = new HashMap<>(UsageOptionsTest.OPERATOR_COMMANDS);
        uses.putAll(Map.of("demo", Set.of("--leases", "--redis-url", "--etcd-url", "--db-url"), "compare", Set.of(),
                "chaos", Set.of("--leases", "--tokens", "--nats-url"),
                "lab-settle", uses.get("settle"), "lab-worker", uses.get("worker")));
        assertThat(UsageOptionsTest.checkEveryCommand(uses)).contains("demo", "compare", "chaos", "lab-settle", "lab-worker");
    }

    /** {@code fenced --help} sums up the lab's commands, as the operator's, in one complete sentence each. */
    @Test
    void theLabsCommandsAreSummedUpInOneCompleteSentence() {
        assertThat(CommandSummaryTest.checkEverySummary()).contains("settle", "demo", "compare", "chaos").doesNotContain("lab-settle", "lab-worker");
    }

    /** Exit 2, one line on stderr, and it says {@code says}. */
    private static void assertOneLineUsageError(CliRun run, String says) {
        assertThat(run.exit()).as(run.stderr()).isEqualTo(FencedCli.USAGE);
        assertThat(run.oneLineError()).as(run.stderr()).isTrue();
        assertThat(run.stderr()).contains(says);
    }
}
