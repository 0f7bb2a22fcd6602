package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fenced.fleet.Broker;
import dev.fenced.fleet.JobQueueStatus;
import dev.fenced.fleet.JobStream;
import dev.fenced.fleet.SettlementJobs;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestNats;
import dev.fenced.testing.servers.TestRedis;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The fleet's commands on the command line: enqueue, status of the stream, and bad input. */
class FleetCliTest {
    private static final String DB = TestDatabases.postgresUrl();

    private static String freshStream() {
        return "T_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10).toUpperCase(Locale.ROOT);
    }

    @Test
    void aDoubleEnqueueIsOneJobAndStatusShowsTheStream() throws Exception {
        String stream = freshStream();
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        CliRun seeded = CliRun.of("seed", "--merchant", merchant, "--refunds", "3", "--total", "30.00", "--db-url", DB, "--enqueue",
                "--nats-url", TestNats.url(), "--stream", stream);
        assertThat(seeded.exit()).as(seeded.both()).isZero();
        assertThat(seeded.stdout()).contains("enqueued " + merchant + " as job 1");
        CliRun again = CliRun.of("enqueue", "--merchant", merchant, "--nats-url", TestNats.url(), "--stream", stream);
        assertThat(again.exit()).as(again.both()).isZero();
        assertThat(again.stdout()).contains("already enqueued as job 1");
        CliRun status = CliRun.of("status", "--merchant", merchant, "--json", "--db-url", DB, "--redis-url", TestRedis.uri(),
                "--nats-url", TestNats.url(), "--stream", stream);
        assertThat(status.exit()).as(status.both()).isZero();
        assertThat(status.stdout().replaceAll("\\s", "")).contains("\"jobs\":{\"waiting\":1,\"handedBack\":0,\"inProgress\":0,\"redelivered\":0,\"deadLetters\":0}");
        try (io.nats.client.Connection nats = dev.fenced.fleet.Broker.connect(TestNats.url(), java.time.Duration.ofSeconds(5), "cleanup")) {
            dev.fenced.fleet.JobStream.builder().stream(stream).build().delete(nats);
        }
    }

    /** {@code fenced worker} in a process of its own, on the test's stream, settling one job at a time, one refund at a time. */
    private static Process workerProcess(String stream, String gatewayUrl, String... extra) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), FencedCli.class.getName(), "worker", "--jobs", "1", "--concurrency", "1",
                "--stream", stream, "--nats-url", TestNats.url(), "--redis-url", TestRedis.uri(), "--db-url", DB, "--gateway-url", gatewayUrl));
        command.addAll(List.of(extra));
        return new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    }

    private static void drain(Process worker) throws Exception {
        new ProcessBuilder("kill", "-TERM", Long.toString(worker.pid())).start().waitFor();
        assertThat(worker.waitFor(60, TimeUnit.SECONDS)).as("drained").isTrue();
        assertThat(worker.exitValue()).isZero();
    }

    private static JobQueueStatus jobs(io.nats.client.Connection nats, String stream) {
        return SettlementJobs.statusOf(nats, JobStream.builder().stream(stream).build()).orElseThrow();
    }

    /**
     * Issue #34: after SIGTERM drained the only worker, {@code status} counted the job it handed back
     * as in progress for as long as no worker ran. The control: while the worker holds it, it is.
     */
    @Test
    void aJobADrainedWorkerHandedBackIsNotInProgress() throws Exception {
        String stream = freshStream();
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        CliRun seeded = CliRun.of("seed", "--merchant", merchant, "--refunds", "400", "--total", "4000.00", "--db-url", DB, "--enqueue",
                "--nats-url", TestNats.url(), "--stream", stream);
        assertThat(seeded.exit()).as(seeded.both()).isZero();
        List<String> status = List.of("status", "--all", "--limit", "1", "--db-url", DB, "--redis-url", TestRedis.uri(),
                "--nats-url", TestNats.url(), "--stream", stream);
        Process worker = null;
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(40)).build());
             io.nats.client.Connection nats = Broker.connect(TestNats.url(), Duration.ofSeconds(5), "fleet-cli-test")) {
            try {
                worker = workerProcess(stream, gateway.url());
                await("the worker process to take the job").atMost(Duration.ofMinutes(1)).until(() -> jobs(nats, stream).waiting() == 0);
                CliRun held = CliRun.of(status);
                assertThat(held.stdout()).as(held.both())
                        .contains("job stream: 0 waiting, 0 handed back (waiting for redelivery), 1 in progress, 0 redelivered, 0 dead letters");

                drain(worker);
                CliRun handedBack = CliRun.of(status);
                // Redelivered is 0, or 1 when the draining worker's last fetch took the job back before handing it back again.
                assertThat(handedBack.stdout()).as(handedBack.both())
                        .contains("job stream: 0 waiting, 1 handed back (waiting for redelivery), 0 in progress, ");
            } finally {
                if (worker != null) {
                    worker.destroyForcibly();
                }
                JobStream.builder().stream(stream).build().delete(nats);
            }
        }
    }

    /**
     * A job dead-lettered by a real worker (the gateway unreachable, one delivery allowed): status
     * names the command that retries it, that command sends it back, and a worker settles it.
     */
    @Test
    void statusSaysHowToRetryTheDeadLettersAndRequeueSendsThemBack() throws Exception {
        String stream = freshStream();
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        CliRun seeded = CliRun.of("seed", "--merchant", merchant, "--refunds", "3", "--total", "30.00", "--db-url", DB, "--enqueue",
                "--nats-url", TestNats.url(), "--stream", stream);
        assertThat(seeded.exit()).as(seeded.both()).isZero();
        List<String> status = List.of("status", "--all", "--limit", "1", "--db-url", DB, "--redis-url", TestRedis.uri(),
                "--nats-url", TestNats.url(), "--stream", stream);
        Process worker = null;
        try (io.nats.client.Connection nats = Broker.connect(TestNats.url(), Duration.ofSeconds(5), "fleet-cli-test")) {
            try {
                worker = workerProcess(stream, "http://127.0.0.1:1", "--max-deliver", "1");
                await("the worker process to dead-letter the job").atMost(Duration.ofMinutes(1))
                        .until(() -> jobs(nats, stream).deadLetters() == 1);
                drain(worker);
                CliRun dead = CliRun.of(status);
                String advice = "retry the dead letters: fenced requeue --nats-url " + TestNats.url() + " --stream " + stream;
                assertThat(dead.stdout()).as(dead.both()).contains("0 waiting").contains("1 dead letters").contains(advice);

                CliRun requeued = CliRun.of(advice.substring(advice.indexOf("requeue")).split(" "));
                assertThat(requeued.exit()).as(requeued.both()).isZero();
                assertThat(requeued.stdout()).isEqualTo("requeued 1 dead-lettered job from " + stream + "_DEAD to " + stream + "\n");
                CliRun after = CliRun.of(status);
                assertThat(after.stdout()).as(after.both()).contains("job stream: 1 waiting").contains("0 dead letters")
                        .doesNotContain("retry the dead letters");

                try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
                    worker = workerProcess(stream, gateway.url());
                    await("the requeued job to be settled").atMost(Duration.ofMinutes(1)).until(() -> jobs(nats, stream).unfinished() == 0);
                    drain(worker);
                    assertThat(gateway.ledger()).filteredOn(refund -> refund.merchant().equals(merchant)).hasSize(3);
                }
            } finally {
                if (worker != null) {
                    worker.destroyForcibly();
                }
                JobStream.builder().stream(stream).build().delete(nats);
            }
        }
    }

    /**
     * Without a URL the first fleet command starts a nats-server of its own, which outlives it; the
     * next command uses the same one, so the two see one stream (the double enqueue is one job).
     */
    @Test
    void withoutANatsUrlTheFleetCommandsShareALocalNatsServer() throws Exception {
        String port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            port = Integer.toString(free.getLocalPort());
        }
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        long pid = -1;
        try {
            // "--nats-url=" overrides FENCED_NATS_URL, which CI sets
            CliRun first = CliRun.of("seed", "--merchant", merchant, "--refunds", "2", "--total", "20.00", "--db-url", DB, "--enqueue",
                    "--nats-url=", "--local-nats-port", port);
            assertThat(first.exit()).as(first.both()).isZero();
            java.util.regex.Matcher started = java.util.regex.Pattern.compile("started nats-server \\(pid (\\d+)\\) on nats://127\\.0\\.0\\.1:" + port)
                    .matcher(first.stderr());
            assertThat(started.find()).as(first.stderr()).isTrue();
            pid = Long.parseLong(started.group(1));
            assertThat(first.stdout()).contains("enqueued " + merchant + " as job");

            CliRun again = CliRun.of("enqueue", "--merchant", merchant, "--nats-url=", "--local-nats-port", port);
            assertThat(again.exit()).as(again.both()).isZero();
            assertThat(again.stderr()).contains("using the nats-server on nats://127.0.0.1:" + port);
            assertThat(again.stdout()).contains("already enqueued");
            assertThat(ProcessHandle.of(pid)).as("the server outlives the commands").isPresent();
        } finally {
            ProcessHandle.of(pid).ifPresent(server -> {
                server.destroy();
                server.onExit().join();
            });
            java.nio.file.Path storage = java.nio.file.Path.of(System.getProperty("java.io.tmpdir"), "fenced-nats-" + port);
            try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.walk(storage)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    @Test
    void withoutANatsServerTheMessageSaysWhatToInstall() throws Exception {
        java.nio.file.Path empty = java.nio.file.Files.createTempDirectory("no-nats");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> LocalNats.binary(java.util.List.of(empty)))
                .hasMessageContaining("apt-get install nats-server").hasMessageContaining("--nats-url");
    }

    @Test
    void badFleetInputIsOneLine() {
        CliRun jobs = CliRun.of("worker", "--jobs", "0", "--nats-url", TestNats.url());
        assertThat(jobs.exit()).isEqualTo(FencedCli.USAGE);
        assertThat(jobs.oneLineError()).as(jobs.stderr()).isTrue();
        assertThat(jobs.stderr()).contains("--jobs must be 1 to 64");

        CliRun malformed = CliRun.of("enqueue", "--merchant", "m_1", "--nats-url", "nats//user:hunter2@x");
        assertThat(malformed.exit()).isEqualTo(FencedCli.USAGE);
        assertThat(malformed.oneLineError()).as(malformed.stderr()).isTrue();
        assertThat(malformed.stderr()).contains("nats://").doesNotContain("hunter2");

        CliRun wrongScheme = CliRun.of("enqueue", "--merchant", "m_1", "--nats-url", "http://127.0.0.1:4222");
        assertThat(wrongScheme.exit()).isEqualTo(FencedCli.USAGE);

        CliRun unreachable = CliRun.of("enqueue", "--merchant", "m_1", "--nats-url", "nats://fleet:hunter2@127.0.0.1:1");
        assertThat(unreachable.exit()).as(unreachable.both()).isEqualTo(FencedCli.RUNTIME_FAILURE);
        assertThat(unreachable.oneLineError()).as(unreachable.stderr()).isTrue();
        assertThat(unreachable.stderr()).contains("NATS at nats://127.0.0.1:1 is unreachable").doesNotContain("hunter2");
        assertThat(unreachable.stdout()).isEmpty();

        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        CliRun seedWithoutBroker = CliRun.of("seed", "--merchant", merchant, "--refunds", "2", "--total", "20.00", "--db-url", DB,
                "--enqueue", "--nats-url", "nats://127.0.0.1:1");
        assertThat(seedWithoutBroker.exit()).as(seedWithoutBroker.both()).isEqualTo(FencedCli.RUNTIME_FAILURE);
        try (com.zaxxer.hikari.HikariDataSource db = Connections.readOnlyDatabase(DB, 1)) {
            assertThat(dev.fenced.settlement.RefundSummary.of(db, merchant).rowsByState()).as("no row without a job").isEmpty();
        }
    }
}
