package dev.fenced.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real {@code nats-server} process with JetStream on a free loopback port, its file storage in a
 * temporary directory kept across {@link #restart()}: a restart loses no stored message. The binary
 * comes from the PATH (Debian's package {@code nats-server}); none is downloaded.
 */
public final class EmbeddedNats implements AutoCloseable {
    private static final String INSTALL = "install it (Debian: apt-get install nats-server) or name a running one with --nats-url /"
            + " FENCED_NATS_URL";
    private final int port;
    private final Path storage;
    private Process process;

    private EmbeddedNats(int port, Path storage) {
        this.port = port;
        this.storage = storage;
    }

    /** Starts a server; an IllegalStateException that says what to install when there is no binary. */
    public static EmbeddedNats start() {
        String binary = LocalProcesses.binary("nats-server", INSTALL);
        try {
            EmbeddedNats nats = new EmbeddedNats(LocalProcesses.freePort(), Files.createTempDirectory("fenced-nats"));
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
        launch(LocalProcesses.binary("nats-server", INSTALL));
    }

    /** True when a {@code nats-server} binary is on the PATH (or in the usual system folders). */
    public static boolean isAvailable() {
        try {
            LocalProcesses.binary("nats-server", INSTALL);
            return true;
        } catch (IllegalStateException none) {
            return false;
        }
    }

    private void launch(String binary) {
        try {
            process = new ProcessBuilder(binary, "-a", "127.0.0.1", "-p", Integer.toString(port), "-js", "-sd", storage.toString())
                    .redirectErrorStream(true).redirectOutput(storage.resolve("nats-server.log").toFile()).start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start nats-server", e);
        }
        if (LocalProcesses.await(() -> {
            if (!process.isAlive()) {
                throw new IllegalStateException("nats-server exited with " + process.exitValue() + "; see " + storage.resolve("nats-server.log"));
            }
            try (Socket ignored = new Socket("127.0.0.1", port)) {
                return true;
            } catch (IOException notYet) {
                return false;
            }
        }, Duration.ofSeconds(15))) {
            return;
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

}
