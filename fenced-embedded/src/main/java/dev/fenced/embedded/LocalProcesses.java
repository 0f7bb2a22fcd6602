package dev.fenced.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
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

    /** A loopback port nothing listens on now. */
    static int freePort() {
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
