package dev.fenced.bench;

import com.sun.management.OperatingSystemMXBean;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The gateway client's own cost: {@link GatewayClient} with its built-in HTTP/1.1 client against the
 * same class through the JDK's {@code HttpClient} ({@code -Dfenced.gateway.httpClient=jdk}), creating
 * refunds on the simulated gateway (25 ms, in this JVM) from 32 threads, as one worker of the fleet
 * has in flight. Interleaved in blocks (built-in, JDK, JDK, built-in), so that both meet the same
 * noise. CPU is this whole JVM's ({@code getProcessCpuTime}): the gateway's share is the same for
 * both, so the difference is the clients'.
 */
final class PairedGatewayClients {
    private static final int THREADS = 32;
    private static final BigDecimal AMOUNT = new BigDecimal("70.25");

    private PairedGatewayClients() {
    }

    private record Block(long calls, long cpuNanos, long wallNanos) {
    }

    static String run(boolean quick) throws Exception {
        int callsPerThread = quick ? 10 : 100;
        int rounds = quick ? 3 : 12;
        int warmUpRounds = quick ? 1 : 4;
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        List<Block> builtin = new ArrayList<>();
        List<Block> jdk = new ArrayList<>();
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(FleetThroughput.LATENCY).build());
             GatewayClient builtinClient = client(gateway.url(), "builtin");
             GatewayClient jdkClient = client(gateway.url(), "jdk")) {
            for (int round = 0; round < warmUpRounds + rounds; round++) {
                boolean counted = round >= warmUpRounds;
                String prefix = "c" + round + "-";
                record(counted ? builtin : null, block(threads, builtinClient, prefix + "b1-", callsPerThread, os));
                record(counted ? jdk : null, block(threads, jdkClient, prefix + "j1-", callsPerThread, os));
                record(counted ? jdk : null, block(threads, jdkClient, prefix + "j2-", callsPerThread, os));
                record(counted ? builtin : null, block(threads, builtinClient, prefix + "b2-", callsPerThread, os));
            }
        } finally {
            threads.shutdownNow();
        }
        return report(builtin, jdk, callsPerThread, rounds, warmUpRounds);
    }

    private static GatewayClient client(String url, String which) {
        String before = System.getProperty(GatewayClient.HTTP_CLIENT_PROPERTY);
        System.setProperty(GatewayClient.HTTP_CLIENT_PROPERTY, which);
        try {
            return GatewayClient.of(url, Duration.ofSeconds(10));
        } finally {
            if (before == null) {
                System.clearProperty(GatewayClient.HTTP_CLIENT_PROPERTY);
            } else {
                System.setProperty(GatewayClient.HTTP_CLIENT_PROPERTY, before);
            }
        }
    }

    private static void record(List<Block> into, Block block) {
        if (into != null) {
            into.add(block);
        }
    }

    /** {@code THREADS × callsPerThread} creates, each with a key of its own; the JVM's CPU and the wall time they took. */
    private static Block block(ExecutorService threads, GatewayClient client, String prefix, int callsPerThread, OperatingSystemMXBean os)
            throws Exception {
        long cpu = os.getProcessCpuTime();
        long wall = System.nanoTime();
        List<Future<?>> running = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            String keys = prefix + t + "-";
            running.add(threads.submit(() -> {
                for (int i = 0; i < callsPerThread; i++) {
                    client.createRefund(keys + i, keys + i, "m_bench", AMOUNT, "EUR");
                }
                return null;
            }));
        }
        for (Future<?> call : running) {
            call.get();
        }
        return new Block((long) THREADS * callsPerThread, os.getProcessCpuTime() - cpu, System.nanoTime() - wall);
    }

    private static String report(List<Block> builtin, List<Block> jdk, int callsPerThread, int rounds, int warmUpRounds) {
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i + 1 < builtin.size(); i += 2) { // one round: the two built-in blocks against the two JDK blocks between them
            ratios.add(cpuPerCall(builtin.subList(i, i + 2)) / cpuPerCall(jdk.subList(i, i + 2)));
        }
        Collections.sort(ratios);
        double builtinCpu = cpuPerCall(builtin);
        double jdkCpu = cpuPerCall(jdk);
        return String.format("## The gateway client: built-in HTTP/1.1 against the JDK's HttpClient, interleaved%n%n"
                        + "| client | calls | CPU µs per call (the JVM, the simulated gateway included) | calls/s |%n|---|---:|---:|---:|%n"
                        + "| built-in | %,d | %.0f | %,.0f |%n| JDK's HttpClient | %,d | %.0f | %,.0f |%n%n"
                        + "Built-in against the JDK's: **%.3fx** the CPU per call (ratio of the totals); by round, upper median %.3fx, from %.3fx to %.3fx."
                        + " %d threads, %d creates each per block, blocks built-in, JDK, JDK, built-in; %d rounds after %d of warm-up; gateway"
                        + " latency %d ms.%n%n",
                calls(builtin), builtinCpu / 1e3, rate(builtin), calls(jdk), jdkCpu / 1e3, rate(jdk), builtinCpu / jdkCpu,
                ratios.get(ratios.size() / 2), ratios.get(0), ratios.get(ratios.size() - 1), THREADS, callsPerThread, rounds, warmUpRounds,
                FleetThroughput.LATENCY.toMillis());
    }

    private static long calls(List<Block> blocks) {
        return blocks.stream().mapToLong(Block::calls).sum();
    }

    private static double cpuPerCall(List<Block> blocks) {
        return blocks.stream().mapToLong(Block::cpuNanos).sum() / (double) calls(blocks);
    }

    private static double rate(List<Block> blocks) {
        return calls(blocks) / (blocks.stream().mapToLong(Block::wallNanos).sum() / 1e9);
    }
}
