package dev.fenced.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import redis.embedded.RedisServer;

/**
 * A real {@code redis-server} process on a free loopback port, without persistence unless started
 * {@link #startDurable durable}: a restart loses every key, as a production Redis without AOF or RDB does.
 */
public final class EmbeddedRedis implements AutoCloseable {
    private final int port;
    private final String password;
    /** Where the append-only file is kept, fsync'd on every write; null for no persistence. */
    private final Path appendOnlyDir;
    private RedisServer server;
    private long pausedPid;

    private EmbeddedRedis(int port, String password, Path appendOnlyDir) {
        this.port = port;
        this.password = password;
        this.appendOnlyDir = appendOnlyDir;
    }

    /** Starts a server on a free port. */
    public static EmbeddedRedis start() {
        return start(null);
    }

    /** Starts a server on a free port that requires {@code password} (null for none). */
    public static EmbeddedRedis start(String password) {
        EmbeddedRedis redis = new EmbeddedRedis(freePort(), password, null);
        redis.startServer();
        return redis;
    }

    /**
     * Starts a server that appends every write to a file in {@code dir} and fsyncs it before it
     * answers ({@code appendonly yes}, {@code appendfsync always}): a restart keeps every key, at
     * the cost of a flush per write, as a database's commit pays.
     */
    public static EmbeddedRedis startDurable(Path dir) {
        EmbeddedRedis redis = new EmbeddedRedis(freePort(), null, dir.toAbsolutePath());
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
                    .onShutdownForceStop(true);
            if (appendOnlyDir == null) {
                builder.setting("appendonly no");
            } else {
                builder.setting("dir \"" + appendOnlyDir + "\"").setting("appendonly yes").setting("appendfsync always");
            }
            if (password != null) {
                builder.setting("requirepass " + password);
            }
            server = builder.build();
            startBusyProof(server);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start embedded redis-server on port " + port, e);
        }
    }

    /**
     * Starts a server whose binary the library has just written to a temporary file, trying again
     * when exec finds the file busy (ETXTBSY): a process forked at that moment by another thread of
     * this JVM holds the file open for writing until it execs, for a few milliseconds. Two servers
     * started at once on two threads (a chaos run and its control) meet it.
     */
    static void startBusyProof(redis.embedded.Redis server) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                server.start();
                return;
            } catch (IOException e) {
                if (attempt == 5 || !textFileBusy(e)) {
                    throw e;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(50L * attempt));
            }
        }
    }

    private static boolean textFileBusy(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (String.valueOf(cause.getMessage()).contains("Text file busy")) {
                return true;
            }
        }
        return false;
    }

    /** Freezes the server with SIGSTOP: it keeps its socket and answers nothing until {@link #resume()}. */
    public void pause() {
        pausedPid = RedisNode.processId(port, password);
        RedisNode.signal("-STOP", pausedPid);
    }

    /** Thaws a {@link #pause() paused} server with SIGCONT. */
    public void resume() {
        if (pausedPid == 0) {
            throw new IllegalStateException("redis-server on port " + port + " is not paused");
        }
        RedisNode.signal("-CONT", pausedPid);
        pausedPid = 0;
    }

    @Override
    public void close() {
        stopServer();
    }

    /** A loopback port nothing listens on now, below the kernel's ephemeral range (see {@code LocalProcesses.freePort}). */
    public static int freePort() {
        return LocalProcesses.freePort();
    }
}
