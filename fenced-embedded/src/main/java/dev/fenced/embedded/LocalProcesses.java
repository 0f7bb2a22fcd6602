package dev.fenced.embedded;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/** What every server started from a binary on the PATH needs: the binary, a free port, a bounded wait for it to answer. */
final class LocalProcesses {
    /** How often a wait looks again: a server's start takes tens to hundreds of milliseconds. */
    private static final long POLL_MILLIS = 50;

    private LocalProcesses() {
    }

    /** The binary {@code name} from the PATH, else from the usual system folders; an IllegalStateException saying {@code advice} otherwise. */
    static String binary(String name, String advice) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/usr/sbin").split(":")) {
            Path candidate = Path.of(dir, name);
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        for (String dir : List.of("/usr/sbin", "/usr/local/bin", "/usr/bin")) {
            Path candidate = Path.of(dir, name);
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        throw new IllegalStateException("no " + name + " on the PATH: " + advice);
    }

    /** The lowest port handed out: below it are the well-known and registered ports of common servers. */
    private static final int LOWEST_PORT = 10_000;
    /** Where this JVM looks next; each JVM starts at its own random place, so two test JVMs seldom meet. */
    private static final AtomicInteger NEXT_PORT = new AtomicInteger();

    /**
     * A loopback port nothing listens on now, below the kernel's ephemeral range. A port the
     * kernel chose ({@code new ServerSocket(0)}) is an ephemeral one, and between handing it out
     * and the server binding it any client's outgoing connection may take it: CI saw an etcd member
     * exit with "address already in use". Below the range only listeners compete, and a port is
     * handed out only when it could be bound. Ports are taken in turn, so one JVM does not hand out
     * the same port twice in a row.
     */
    static int freePort() {
        return freePortUpTo(Integer.MAX_VALUE);
    }

    /** As {@link #freePort()}, at most {@code highestWanted}: a server that also binds a port above its own. */
    static int freePortUpTo(int highestWanted) {
        int highest = Math.min(highestWanted, ephemeralRangeStart() - 1);
        if (highest - LOWEST_PORT < 1_000) {
            return kernelChosenPort();
        }
        int span = highest - LOWEST_PORT + 1;
        NEXT_PORT.compareAndSet(0, 1 + ThreadLocalRandom.current().nextInt(span));
        for (int tried = 0; tried < 1_000; tried++) {
            int port = LOWEST_PORT + Math.floorMod(NEXT_PORT.getAndIncrement(), span);
            if (bindable(port)) {
                return port;
            }
        }
        return kernelChosenPort();
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(port)); // the wildcard: a listener on any address and family fails it
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    /** The first port of Linux's ephemeral range; 32768 (the kernel's default) where it cannot be read. */
    static int ephemeralRangeStart() {
        // one line read, not Files.readString: a sysctl file reports size 0 and that read stops after one byte
        try (BufferedReader range = Files.newBufferedReader(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
            return Integer.parseInt(range.readLine().trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException notLinux) {
            return 32_768;
        }
    }

    private static int kernelChosenPort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Looks at {@code done} every 50 ms until it holds, for {@code limit} at most; false when the
     * limit ran out. Harness code in a main module: Awaitility is a test dependency only.
     */
    static boolean await(BooleanSupplier done, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
        return true;
    }
}
