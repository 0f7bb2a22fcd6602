package dev.fenced.embedded;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import redis.embedded.RedisServer;

/**
 * A real {@code redis-server} process on a free loopback port, without persistence: a restart
 * loses every key, as a production Redis without AOF or RDB does.
 */
public final class EmbeddedRedis implements AutoCloseable {
    private final int port;
    private final String password;
    private RedisServer server;
    private long pausedPid;

    private EmbeddedRedis(int port, String password) {
        this.port = port;
        this.password = password;
    }

    /** Starts a server on a free port. */
    public static EmbeddedRedis start() {
        return start(null);
    }

    /** Starts a server on a free port that requires {@code password} (null for none). */
    public static EmbeddedRedis start(String password) {
        EmbeddedRedis redis = new EmbeddedRedis(freePort(), password);
        redis.startServer();
        return redis;
    }

    /** {@code redis://127.0.0.1:port}, with the password when there is one. */
    public String uri() {
        return password == null ? "redis://127.0.0.1:" + port : "redis://:" + password + "@127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /** Stops the process and starts a new one on the same port: every key is gone. */
    public void restart() {
        stopServer();
        startServer();
    }

    public void stopServer() {
        try {
            if (server != null) {
                server.stop();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public void startServer() {
        try {
            var builder = RedisServer.newRedisServer()
                    .port(port)
                    .bind("127.0.0.1")
                    .setting("save \"\"")
                    .setting("appendonly no")
                    .onShutdownForceStop(true);
            if (password != null) {
                builder.setting("requirepass " + password);
            }
            server = builder.build();
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start embedded redis-server on port " + port, e);
        }
    }

    /** Freezes the server with SIGSTOP: it keeps its socket and answers nothing until {@link #resume()}. */
    public void pause() {
        pausedPid = processId();
        signal("-STOP", pausedPid);
    }

    /** Thaws a {@link #pause() paused} server with SIGCONT. */
    public void resume() {
        if (pausedPid == 0) {
            throw new IllegalStateException("redis-server on port " + port + " is not paused");
        }
        signal("-CONT", pausedPid);
        pausedPid = 0;
    }

    private static void signal(String signal, long pid) {
        try {
            Process kill = new ProcessBuilder("kill", signal, Long.toString(pid)).inheritIO().start();
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill " + signal + " " + pid + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted signalling redis-server", e);
        }
    }

    /** The server's own answer: {@code process_id} from {@code INFO server}. */
    private long processId() {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5_000);
            OutputStream out = socket.getOutputStream();
            if (password != null) {
                out.write(("AUTH " + password + "\r\n").getBytes(StandardCharsets.UTF_8));
            }
            out.write("INFO server\r\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.startsWith("process_id:")) {
                    return Long.parseLong(line.substring("process_id:".length()).trim());
                }
            }
            throw new IllegalStateException("redis-server on port " + port + " did not report its process id");
        } catch (IOException e) {
            throw new UncheckedIOException("could not ask redis-server on port " + port + " for its process id", e);
        }
    }

    @Override
    public void close() {
        stopServer();
    }

    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
