package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.fleet.Broker;
import dev.fenced.fleet.JobQueueStatus;
import dev.fenced.fleet.JobStream;
import dev.fenced.fleet.SettlementJobs;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.settlement.RefundSummary;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestNats;
import dev.fenced.testing.servers.TestRedis;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real worker process drained with SIGTERM while a refund is in flight at a gateway that takes
 * 4 s to answer. With {@code --drain-time 1s} the drain runs out: the process exits 10 with one
 * line that names the job still running and the refund it left in sending, and does not ack the
 * job. Control: {@code --drain-time 30s} drains cleanly and exits 0, nothing left in sending.
 */
class WorkerDrainTest {
    private static final String DB = TestDatabases.postgresUrl();

    @ParameterizedTest(name = "drain time long enough: {0}")
    @ValueSource(booleans = {false, true})
    void aDrainThatOutlastsItsTimeExits10AndSaysWhatItLeft(boolean longEnough) throws Exception {
        String stream = "T_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10).toUpperCase(Locale.ROOT);
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        CliRun seeded = CliRun.of("seed", "--merchant", merchant, "--refunds", "3", "--total", "30.00", "--db-url", DB, "--enqueue",
                "--nats-url", TestNats.url(), "--stream", stream, "--quiet");
        assertThat(seeded.exit()).as(seeded.both()).isZero();
        Path out = Files.createTempFile("worker-drain", ".out");
        Path err = Files.createTempFile("worker-drain", ".err");
        Process worker = null;
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofSeconds(4)).build());
             HikariDataSource db = Connections.readOnlyDatabase(DB, 1)) {
            worker = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    System.getProperty("java.class.path"), FencedCli.class.getName(), "worker", "--jobs", "1", "--concurrency", "1",
                    "--drain-time", longEnough ? "30s" : "1s", "--stream", stream, "--nats-url", TestNats.url(), "--redis-url",
                    TestRedis.uri(), "--db-url", DB, "--gateway-url", gateway.url())
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            await("the worker has a refund in flight").atMost(Duration.ofSeconds(60))
                    .until(() -> RefundSummary.of(db, merchant).count("sending") == 1);
            new ProcessBuilder("kill", "-TERM", Long.toString(worker.pid())).start().waitFor();
            assertThat(worker.waitFor(60, TimeUnit.SECONDS)).as("the process ended").isTrue();
            String stderr = Files.readString(err, StandardCharsets.UTF_8);
            String stdout = Files.readString(out, StandardCharsets.UTF_8);
            if (longEnough) {
                assertThat(worker.exitValue()).as("control: " + stdout + stderr).isZero();
                assertThat(stdout).contains("drained: 0 jobs done, 0 retried, 1 handed back");
                assertThat(RefundSummary.of(db, merchant).count("sending")).isZero();
                return;
            }
            assertThat(worker.exitValue()).as(stdout + stderr).isEqualTo(Drain.TOO_SLOW);
            assertThat(stderr.strip().lines()).as(stderr).containsExactly("fenced worker: the drain gave up after 1s with 1 job still running ("
                    + merchant + "): 1 refund left in sending; left to JetStream, redelivered after AckWait");
            try (io.nats.client.Connection nats = Broker.connect(TestNats.url(), Duration.ofSeconds(5), "drain-test")) {
                JobQueueStatus status = SettlementJobs.on(nats, JobStream.builder().stream(stream).build()).status();
                assertThat(status.inProgress()).as("the job is not acked: %s", status).isEqualTo(1);
            }
        } finally {
            if (worker != null) {
                worker.destroyForcibly();
            }
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
            try (io.nats.client.Connection nats = Broker.connect(TestNats.url(), Duration.ofSeconds(5), "cleanup")) {
                JobStream.builder().stream(stream).build().delete(nats);
            }
        }
    }
}
