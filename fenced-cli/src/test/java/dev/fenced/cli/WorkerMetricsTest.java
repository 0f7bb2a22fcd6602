package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fenced.fleet.Broker;
import dev.fenced.fleet.JobStream;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestNats;
import dev.fenced.testing.servers.TestRedis;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code worker --metrics-port}: a real worker process settles a job from the broker, and its
 * Prometheus endpoint shows what it did; SIGTERM drains it and the exit is 0.
 */
class WorkerMetricsTest {

    @Test
    void aWorkerServesItsMetersForPrometheus() throws Exception {
        String stream = "T_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10).toUpperCase(Locale.ROOT);
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        String db = TestDatabases.postgresUrl();
        CliRun seeded = CliRun.of("seed", "--merchant", merchant, "--refunds", "3", "--total", "30.00", "--db-url", db, "--enqueue",
                "--nats-url", TestNats.url(), "--stream", stream);
        assertThat(seeded.exit()).as(seeded.both()).isZero();
        Process worker = null;
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            worker = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    System.getProperty("java.class.path"), FencedCli.class.getName(), "worker", "--metrics-port", "0", "--stream", stream,
                    "--nats-url", TestNats.url(), "--redis-url", TestRedis.uri(), "--db-url", db, "--gateway-url", gateway.url())
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            String endpoint = endpoint(worker);
            HttpClient http = HttpClient.newHttpClient();
            String scrape = await("the worker settling the job and its meters showing it").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> http.send(HttpRequest.newBuilder(URI.create(endpoint)).build(), HttpResponse.BodyHandlers.ofString()).body(),
                            body -> body.contains("settlement_refunds_settled_total{state=\"sent\"} 3.0"));
            assertThat(scrape).contains("settlement_refunds_settled_total{state=\"sent\"} 3.0")
                    .contains("settlement_gateway_calls_total{outcome=\"succeeded\"} 3.0")
                    .contains("fenced_lease_acquire_seconds_count{outcome=\"granted\"} 1")
                    .contains("jvm_memory_used_bytes");
            new ProcessBuilder("kill", "-TERM", Long.toString(worker.pid())).start().waitFor();
            assertThat(worker.waitFor(60, TimeUnit.SECONDS)).as("drained").isTrue();
            assertThat(worker.exitValue()).isZero();
        } finally {
            if (worker != null) {
                worker.destroyForcibly();
            }
            try (io.nats.client.Connection nats = Broker.connect(TestNats.url(), Duration.ofSeconds(5), "cleanup")) {
                JobStream.builder().stream(stream).build().delete(nats);
            }
        }
    }

    /** The worker prints where its metrics are on stderr. */
    private static String endpoint(Process worker) throws Exception {
        BufferedReader err = new BufferedReader(new InputStreamReader(worker.getErrorStream(), StandardCharsets.UTF_8));
        Pattern at = Pattern.compile("metrics at (http://\\S+/metrics)");
        StringBuilder seen = new StringBuilder();
        for (String line; (line = err.readLine()) != null; ) {
            Matcher matcher = at.matcher(line);
            if (matcher.find()) {
                Thread drainer = new Thread(() -> err.lines().forEach(ignored -> { }));
                drainer.setDaemon(true);
                drainer.start();
                return matcher.group(1);
            }
            seen.append(line).append('\n');
        }
        throw new AssertionError("the worker never said where its metrics are:\n" + seen);
    }
}
