package dev.fenced.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real {@code nats-server} process with JetStream on a free loopback port, its file storage in a
 * temporary directory kept across {@link #restart()}: a restart loses no stored message. The binary
 * comes from the PATH (Debian's package {@code nats-server}); none is downloaded.
 */
public final class EmbeddedNats implements AutoCloseable {
    private final int port;
    private final Path storage;
    private Process process;

    private EmbeddedNats(int port, Path storage) {
        this.port = port;
        this.storage = storage;
    }

    /** Starts a server; an IllegalStateException that says what to install when there is no binary. */
    public static EmbeddedNats start() {
        String binary = binary();
        try {
            EmbeddedNats nats = new EmbeddedNats(freePort(), Files.createTempDirectory("fenced-nats"));
            nats.launch(binary);
            return nats;
        } catch (IOException e) {
            throw new UncheckedIOException("could not prepare nats-server's storage", e);
        }
    }

    /** {@code nats://127.0.0.1:port}. */
    public String url() {
        return "nats://127.0.0.1:" + port;
    }

    /** Stops the server (SIGTERM, then SIGKILL) and starts it again on the same port and storage. */
    public void restart() {
        stopProcess();
        launch(binary());
    }

    /** True when a {@code nats-server} binary is on the PATH (or in the usual system folders). */
    public static boolean isAvailable() {
        try {
            binary();
            return true;
        } catch (IllegalStateException none) {
            return false;
        }
    }

    private static String binary() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/usr/sbin").split(":")) {
            Path candidate = Path.of(dir, "nats-server");
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        for (String dir : List.of("/usr/sbin", "/usr/local/bin", "/usr/bin")) {
            Path candidate = Path.of(dir, "nats-server");
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        throw new IllegalStateException("no nats-server on the PATH: install it (Debian: apt-get install nats-server) or name a"
                + " running one with --nats-url / FENCED_NATS_URL");
    }

    private void launch(String binary) {
        try {
            process = new ProcessBuilder(binary, "-a", "127.0.0.1", "-p", Integer.toString(port), "-js", "-sd", storage.toString())
                    .redirectErrorStream(true).redirectOutput(storage.resolve("nats-server.log").toFile()).start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start nats-server", e);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("nats-server exited with " + process.exitValue() + "; see " + storage.resolve("nats-server.log"));
            }
            try (Socket ignored = new Socket("127.0.0.1", port)) {
                return;
            } catch (IOException notYet) {
                sleep();
            }
        }
        throw new IllegalStateException("nats-server did not listen on port " + port + " within 15 s");
    }

    private void stopProcess() {
        if (process == null) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        stopProcess();
        try (Stream<Path> files = Files.walk(storage)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory: the system cleans it eventually
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void sleep() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
