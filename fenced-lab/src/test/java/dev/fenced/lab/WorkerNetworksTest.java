package dev.fenced.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A worker's namespace reaches this machine's loopback servers, a cut drops what crosses it (no
 * reset: the connection times out), a heal lets it through again, and closing leaves nothing behind.
 * Root and nftables, as the partition faults; skipped elsewhere, never in CI.
 */
class WorkerNetworksTest {

    @Test
    void aCutDropsSilentlyAHealLetsThroughAndNothingIsLeftBehind() throws Exception {
        ChaosTest.requireNetworkNamespaces();
        String name;
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress()); WorkerNetworks networks = WorkerNetworks.open()) {
            Thread acceptor = acceptForever(server);
            WorkerNetworks.Namespace namespace = networks.create("w1");
            name = namespace.name();
            int port = server.getLocalPort();
            assertThat(connectFrom(namespace, port)).as("before any cut").isZero();

            namespace.cut(Set.of(port), WorkerNetworks.Direction.TO_SERVER);
            assertThat(connectFrom(namespace, port)).as("cut, worker to server: timed out, not refused").isEqualTo(124);
            namespace.heal();
            assertThat(connectFrom(namespace, port)).as("healed").isZero();

            namespace.cut(Set.of(port + 1), WorkerNetworks.Direction.BOTH);
            assertThat(connectFrom(namespace, port)).as("another port's cut leaves this link alone").isZero();
            namespace.heal();

            namespace.isolate();
            assertThat(connectFrom(namespace, port)).as("isolated").isEqualTo(124);
            namespace.heal();
            assertThat(connectFrom(namespace, port)).as("healed after isolation").isZero();
            acceptor.interrupt();
        }
        assertThat(command("ip", "netns", "list")).doesNotContain(name);
        assertThat(command("ip", "-o", "link", "show")).doesNotContain(name.replace("fenced-chaos-", "fc").replaceAll("-[0-9a-z]+$", "-h"));
        assertThat(command("nft", "list", "tables")).doesNotContain("fenced_chaos_" + Long.toString(ProcessHandle.current().pid(), 36));
    }

    /** The exit code of a TCP connect from inside the namespace, given 2 s: 0 connected, 124 timed out (a silent drop). */
    private static int connectFrom(WorkerNetworks.Namespace namespace, int port) throws Exception {
        List<String> command = new ArrayList<>(namespace.launcher());
        command.addAll(List.of("timeout", "2", "bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/" + port));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).as("the connect ends within its 2 s").isTrue();
        return process.exitValue();
    }

    private static String command(String... command) throws Exception {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return output;
    }

    private static Thread acceptForever(ServerSocket server) {
        Thread thread = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket ignored = server.accept()) {
                    // accepted: what the connect from the namespace waits for
                } catch (IOException closed) {
                    return;
                }
            }
        }, "accept");
        thread.setDaemon(true);
        thread.start();
        return thread;
    }
}
