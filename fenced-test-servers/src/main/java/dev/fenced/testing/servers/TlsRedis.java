package dev.fenced.testing.servers;

import static org.awaitility.Awaitility.await;

import dev.fenced.embedded.EmbeddedRedis;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Assumptions;

/**
 * A real {@code redis-server} speaking only TLS on a free loopback port, with certificates this
 * class makes with {@code openssl}: a CA, a server certificate it signed (for {@code localhost} and
 * {@code 127.0.0.1}, or only for a name the server is not reached by), a client certificate it
 * signed, and a second CA that signed nothing the server shows. The server asks for client
 * certificates. Skips the test when there is no {@code redis-server} with TLS or no
 * {@code openssl}, and fails it instead in CI ({@code CI=true}).
 */
public final class TlsRedis implements AutoCloseable {
    private final Path dir;
    private final Process server;
    private final int port;

    private TlsRedis(Path dir, Process server, int port) {
        this.dir = dir;
        this.server = server;
        this.port = port;
    }

    /** Starts a server whose certificate names {@code localhost} and {@code 127.0.0.1}, or only {@code serverName} when given. */
    public static TlsRedis start(String serverName) {
        String binary = binary();
        try {
            Path dir = Files.createTempDirectory("fenced-tls-");
            certificates(dir, serverName);
            int port = EmbeddedRedis.freePort();
            List<String> command = new ArrayList<>(List.of(binary, "--port", "0", "--tls-port", Integer.toString(port),
                    "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString(),
                    "--tls-cert-file", dir.resolve("server.crt").toString(), "--tls-key-file", dir.resolve("server.key").toString(),
                    "--tls-ca-cert-file", dir.resolve("ca.crt").toString(), "--tls-auth-clients", "yes"));
            Process server = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("redis.log").toFile()).start();
            try {
                // Listening, or gone: a server that exits (no TLS in this build) is not waited for.
                await("redis-server listening with TLS on port " + port).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                        .until(() -> listening(port) || !server.isAlive());
            } catch (ConditionTimeoutException slow) {
                // reported below with the server's log
            }
            if (!listening(port)) {
                server.destroyForcibly();
                String log = Files.readString(dir.resolve("redis.log"));
                unavailable(binary + " did not start with TLS: " + log.strip());
            }
            return new TlsRedis(dir, server, port);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** {@code rediss://127.0.0.1:PORT}. */
    public String uri() {
        return "rediss://127.0.0.1:" + port;
    }

    public Path caCertificate() {
        return dir.resolve("ca.crt");
    }

    /** A CA that signed neither the server's nor the client's certificate. */
    public Path otherCaCertificate() {
        return dir.resolve("other-ca.crt");
    }

    public Path clientCertificate() {
        return dir.resolve("client.crt");
    }

    public Path clientKey() {
        return dir.resolve("client.key");
    }

    @Override
    public void close() {
        server.destroy();
        try {
            server.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server.destroyForcibly();
    }

    private static boolean listening(int port) {
        try (Socket ignored = new Socket("127.0.0.1", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static String binary() {
        for (String candidate : List.of("/usr/bin/redis-server", "/usr/local/bin/redis-server")) {
            if (Files.isExecutable(Path.of(candidate))) {
                return candidate;
            }
        }
        unavailable("no redis-server binary in /usr/bin or /usr/local/bin (Debian's package redis-server has TLS)");
        return null;
    }

    private static void unavailable(String why) {
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new IllegalStateException(why);
        }
        Assumptions.abort(why);
    }

    private static void certificates(Path dir, String serverName) throws IOException, InterruptedException {
        String names = serverName == null ? "DNS:localhost,IP:127.0.0.1" : "DNS:" + serverName;
        Files.writeString(dir.resolve("server.ext"), "subjectAltName=" + names + "\n", StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("client.ext"), "extendedKeyUsage=clientAuth\n", StandardCharsets.UTF_8);
        for (String ca : List.of("ca", "other-ca")) {
            openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=fenced test " + ca,
                    "-keyout", ca + ".key", "-out", ca + ".crt");
        }
        for (String leaf : List.of("server", "client")) {
            openssl(dir, "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=fenced test " + leaf, "-keyout", leaf + ".key",
                    "-out", leaf + ".csr");
            openssl(dir, "x509", "-req", "-in", leaf + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
                    "-extfile", leaf + ".ext", "-out", leaf + ".crt");
        }
    }

    private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("openssl");
        command.addAll(List.of(args));
        Process process;
        try {
            process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        } catch (IOException e) {
            unavailable("no openssl to make test certificates: " + e.getMessage());
            return;
        }
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.waitFor() != 0) {
            throw new IllegalStateException("openssl " + String.join(" ", args) + " failed: " + output);
        }
    }
}
