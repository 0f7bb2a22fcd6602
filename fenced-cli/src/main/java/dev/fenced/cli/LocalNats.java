package dev.fenced.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The broker of a fleet command run without {@code --nats-url}: a {@code nats-server} on loopback
 * at a well-known port, with JetStream on a file store in the temporary directory. The first fleet
 * command starts it from the PATH in a session of its own, so it outlives that command (and its
 * Ctrl-C) and the next commands (another worker, {@code enqueue}) find it and share its jobs. It
 * is meant for trying the fleet on one machine; a real fleet names its NATS with {@code --nats-url}.
 */
final class LocalNats {
    static final int DEFAULT_PORT = 4222;
    private static final List<Path> SYSTEM_FOLDERS = List.of(Path.of("/usr/sbin"), Path.of("/usr/local/bin"), Path.of("/usr/bin"));

    private LocalNats() {
    }

    /** The URL of the local broker on {@code port}, started first when nothing listens there. */
    static String ensureRunning(int port) {
        String url = "nats://127.0.0.1:" + port;
        if (listening(port)) {
            System.err.println("no --nats-url: using the nats-server on " + url);
            return url;
        }
        String binary = binary(searchFolders());
        Path storage = Path.of(System.getProperty("java.io.tmpdir"), "fenced-nats-" + port);
        Process server;
        try {
            Files.createDirectories(storage);
            List<String> command = new ArrayList<>();
            // A session of its own: the signals of this command's terminal never reach the broker the next commands need.
            Path setsid = Path.of("/usr/bin/setsid");
            if (Files.isExecutable(setsid)) {
                command.add(setsid.toString());
            }
            command.addAll(List.of(binary, "-a", "127.0.0.1", "-p", Integer.toString(port), "-js", "-sd", storage.toString()));
            server = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(storage.resolve("nats-server.log").toFile())).start();
        } catch (IOException e) {
            throw new IllegalStateException("could not start " + binary + ": " + e.getMessage(), e);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() < deadline) {
            if (listening(port)) {
                if (server.isAlive()) {
                    System.err.println("no --nats-url: started nats-server (pid " + server.pid() + ") on " + url + " with JetStream in "
                            + storage + "; it keeps running for the next commands (stop it with: kill " + server.pid() + ")");
                } else {
                    // another command started one at the same moment, and this one lost the port to it
                    System.err.println("no --nats-url: using the nats-server on " + url);
                }
                return url;
            }
            if (!server.isAlive()) {
                throw new IllegalStateException("nats-server exited with " + server.exitValue() + " before listening on " + url
                        + "; see " + storage.resolve("nats-server.log"));
            }
            pause();
        }
        server.destroy();
        throw new IllegalStateException("nats-server did not listen on " + url + " within 15 s; see " + storage.resolve("nats-server.log"));
    }

    /** The {@code nats-server} binary in the first of {@code folders} that has one. */
    static String binary(List<Path> folders) {
        for (Path folder : folders) {
            Path candidate = folder.resolve("nats-server");
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        throw new IllegalStateException("no --nats-url and no nats-server on the PATH: install it (Debian: apt-get install nats-server;"
                + " or https://github.com/nats-io/nats-server/releases) or name a running one with --nats-url / FENCED_NATS_URL");
    }

    private static List<Path> searchFolders() {
        List<Path> folders = new ArrayList<>();
        for (String folder : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!folder.isBlank()) {
                folders.add(Path.of(folder));
            }
        }
        folders.addAll(SYSTEM_FOLDERS); // Debian installs it in /usr/sbin, which a user's PATH often lacks
        return folders;
    }

    private static boolean listening(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException nothing) {
            return false;
        }
    }

    private static void pause() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while nats-server started", e);
        }
    }
}
