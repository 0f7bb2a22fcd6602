package dev.fenced.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LocalProcessesTest {

    /**
     * The kernel hands ports of its ephemeral range to outgoing connections: a server port picked
     * there can be taken before the server binds it (an etcd member failed so in CI). The control
     * is the kernel's own choice, which is always inside that range.
     */
    @Test
    void aFreePortIsBelowTheEphemeralRangeBindableAndNotHandedOutTwice() throws IOException {
        // read here, not through LocalProcesses.ephemeralRangeStart(): this also checks that reader (it once read "3")
        int ephemeralStart;
        try (BufferedReader range = Files.newBufferedReader(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
            ephemeralStart = Integer.parseInt(range.readLine().trim().split("\\s+")[0]);
        }
        Set<Integer> ports = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            int port = LocalProcesses.freePort();
            assertThat(port).isBetween(10_000, ephemeralStart - 1);
            try (ServerSocket server = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                assertThat(server.getLocalPort()).isEqualTo(port);
            }
            ports.add(port);
        }
        assertThat(ports).hasSize(50);
        try (ServerSocket kernelChosen = new ServerSocket(0)) {
            assertThat(kernelChosen.getLocalPort()).as("control: the kernel's choice").isGreaterThanOrEqualTo(ephemeralStart);
        }
    }

    /** A Redis Cluster node also binds its port + 10000: both stay below the range. */
    @Test
    void aPortWithABusPortAboveItStaysUnderItsBound() {
        int bound = LocalProcesses.ephemeralRangeStart() - 1 - 10_000;
        for (int i = 0; i < 50; i++) {
            assertThat(LocalProcesses.freePortUpTo(bound)).isBetween(10_000, bound);
        }
    }

    @Test
    void aPortSomeoneListensOnIsSkipped() throws IOException {
        int first = LocalProcesses.freePort();
        // the next port in turn is taken now, by this test or by a listener already there: the one after it must come instead
        try (ServerSocket taken = listenIfFree(first + 1)) {
            assertThat(LocalProcesses.freePort()).isNotEqualTo(first + 1).isNotEqualTo(first);
        }
    }

    /** A listener on {@code port}, or null when another process already listens there (taken either way). */
    private static ServerSocket listenIfFree(int port) {
        try {
            return new ServerSocket(port, 1, InetAddress.getLoopbackAddress());
        } catch (IOException alreadyTaken) {
            return null;
        }
    }
}
