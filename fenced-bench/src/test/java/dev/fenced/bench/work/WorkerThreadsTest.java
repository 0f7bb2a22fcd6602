package dev.fenced.bench.work;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.cli.FencedCli;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The work-count gate for what a worker process does besides its calls: the threads it starts per
 * refund, counted by the JVM's own flight recorder in a real {@code fenced settle} process (600
 * refunds, concurrency 8), as on a machine of two cores ({@code -XX:ActiveProcessorCount=2}, whatever
 * this one has). A thread started per gateway call once cost up to a third of a worker's CPU per
 * refund there (BENCHMARKS.md, "CPU per refund"): the JDK's HTTP client hands every answer to
 * {@code CompletableFuture}'s default executor, which on JDKs up to 21 starts a thread per task
 * when the common pool has one thread (later JDKs have no such executor: the test is skipped there).
 * The built-in client that http gateways now get hands nothing to another thread; the JDK's, which
 * https gateways get, is held to the same budget. Control: the same
 * run through the JDK's client ({@code -Dfenced.gateway.httpClient=jdk}) with the common pool forced
 * to one thread starts at least one thread per refund, so the gate sees the slip it guards against.
 */
class WorkerThreadsTest {
    private static final int REFUNDS = 600;

    @Test
    void aWorkerProcessStartsNoThreadPerRefund(@TempDir Path dir) throws Exception {
        assumeTrue(threadPerTaskExecutorExists(), "this JDK's CompletableFuture has no thread-per-task executor");
        double budget = budget();
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            double perRefund = threadsStartedPerRefund(dir.resolve("settle.jfr"), gateway, List.of());
            // The JDK's client, as every https gateway gets it, with the common pool the command line sets up.
            double jdkClient = threadsStartedPerRefund(dir.resolve("jdk.jfr"), gateway, List.of("-D" + GatewayClient.HTTP_CLIENT_PROPERTY + "=jdk"));
            double control = threadsStartedPerRefund(dir.resolve("control.jfr"), gateway,
                    List.of("-D" + GatewayClient.HTTP_CLIENT_PROPERTY + "=jdk", "-Djava.util.concurrent.ForkJoinPool.common.parallelism=1"));
            System.out.printf("threads started per refund by a settle process (%d refunds): %.3f; through the JDK's client: %.3f;"
                    + " control (a thread per task): %.3f%n", REFUNDS, perRefund, jdkClient, control);
            assertThat(control).as("control: CompletableFuture's thread-per-task executor").isGreaterThanOrEqualTo(1.0);
            assertThat(perRefund).as("threads started per refund").isLessThanOrEqualTo(budget);
            assertThat(jdkClient).as("threads started per refund through the JDK's client").isLessThanOrEqualTo(budget);
        }
    }

    /** Settles a new merchant of {@link #REFUNDS} refunds in a {@code fenced settle} process; its thread starts over the refunds. */
    private static double threadsStartedPerRefund(Path recording, PaymentGateway gateway, List<String> jvmOptions) throws Exception {
        String merchant = "m_t" + UUID.randomUUID().toString().substring(0, 8);
        try (HikariDataSource db = new HikariDataSource()) {
            db.setJdbcUrl(TestDatabases.postgresUrl());
            db.setMaximumPoolSize(2);
            RefundSchema.migrate(db);
            RefundSeeder.seed(db, merchant, merchant + "_r", REFUNDS, new BigDecimal(REFUNDS).multiply(new BigDecimal("70.25")), "EUR");
        }
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:StartFlightRecording=filename=" + recording + ",settings=default", "-XX:ActiveProcessorCount=2"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), FencedCli.class.getName(), "settle", "--merchant", merchant,
                "--concurrency", "8", "--db-url", TestDatabases.postgresUrl(), "--redis-url", TestRedis.uri(), "--gateway-url", gateway.url()));
        Path output = recording.resolveSibling(recording.getFileName() + ".out");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        if (!process.waitFor(3, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new AssertionError("fenced settle still runs after 3 minutes: " + Files.readString(output));
        }
        assertThat(process.exitValue()).as(Files.readString(output)).isZero();
        long started = 0;
        try (RecordingFile file = new RecordingFile(recording)) {
            while (file.hasMoreEvents()) {
                RecordedEvent event = file.readEvent();
                if (event.getEventType().getName().equals("jdk.ThreadStart")) {
                    started++;
                }
            }
        }
        return (double) started / REFUNDS;
    }

    private static boolean threadPerTaskExecutorExists() {
        try {
            Class.forName("java.util.concurrent.CompletableFuture$ThreadPerTaskExecutor");
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private static double budget() throws IOException {
        Properties budget = new Properties();
        try (InputStream in = WorkerThreadsTest.class.getResourceAsStream("work-budget.properties")) {
            budget.load(in);
        }
        String value = budget.getProperty("worker.threadsStarted.perRefund");
        assertThat(value).as("work-budget.properties has worker.threadsStarted.perRefund").isNotNull();
        return Double.parseDouble(value);
    }
}
