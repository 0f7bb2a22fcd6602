package dev.fenced.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import redis.embedded.RedisServer;
import redis.embedded.core.ExecutableProvider;

/**
 * A real {@code redis-server} (the embedded 6.2 binary) whose clock can be moved forward while it
 * runs: it is started under libfaketime (Debian's {@code faketime} package), which reads the offset
 * from a file on every clock call. Moving the clock makes every TTL in it run out early, as a
 * server's clock stepped forward by NTP or a hypervisor does. Only this process's clock moves; the
 * JVM's stays as it is. (Debian's own {@code redis-server}, built with jemalloc, does not start
 * under libfaketime; the embedded binary does.) No persistence.
 */
public final class MovableClockRedis implements AutoCloseable {
    /** Where Debian's {@code faketime} package puts the library. */
    static final List<Path> LIBFAKETIME = List.of(Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"),
            Path.of("/usr/lib/faketime/libfaketime.so.1"));

    private final int port;
    private final Path offsetFile;
    private final RedisServer server;
    private Duration moved = Duration.ZERO;

    private MovableClockRedis(int port, Path offsetFile, RedisServer server) {
        this.port = port;
        this.offsetFile = offsetFile;
        this.server = server;
    }

    /** libfaketime, if this machine has it. */
    public static Optional<Path> libfaketime() {
        return LIBFAKETIME.stream().filter(Files::isReadable).findFirst();
    }

    /**
     * Starts one on a free port, its clock at the real time, keeping its wrapper script and clock
     * offset in {@code dir}.
     *
     * @throws IllegalStateException when libfaketime is not installed
     */
    public static MovableClockRedis start(Path dir) {
        Path library = libfaketime().orElseThrow(() -> new IllegalStateException(
                "libfaketime is not installed (apt-get install faketime): a Redis with a movable clock runs under it"));
        int port = EmbeddedRedis.freePort();
        try {
            Files.createDirectories(dir);
            Path offsetFile = dir.resolve("faketime-offset").toAbsolutePath();
            Files.writeString(offsetFile, "+0\n");
            Path binary = ExecutableProvider.newJarResourceProvider().get().toPath().toAbsolutePath();
            Path wrapper = dir.resolve("redis-server-on-faketime").toAbsolutePath();
            // FAKETIME_NO_CACHE: the offset file is read on every clock call, so a move takes effect at once.
            Files.writeString(wrapper, "#!/bin/sh\n"
                    + "LD_PRELOAD='" + library + "' FAKETIME_TIMESTAMP_FILE='" + offsetFile + "' FAKETIME_NO_CACHE=1 exec '"
                    + binary + "' \"$@\"\n", StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwx------"));
            RedisServer server = RedisServer.newRedisServer().executableProvider(wrapper::toFile).port(port).bind("127.0.0.1")
                    .setting("save \"\"").setting("appendonly no").onShutdownForceStop(true).build();
            EmbeddedRedis.startBusyProof(server);
            return new MovableClockRedis(port, offsetFile, server);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start redis-server under libfaketime on port " + port, e);
        }
    }

    /** {@code redis://127.0.0.1:port}. */
    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** Steps this server's clock forward by {@code by} (whole seconds), at once; every TTL in it is that much shorter. */
    public synchronized void moveClockForward(Duration by) {
        if (by.isNegative() || by.toSeconds() < 1 || by.toNanos() % 1_000_000_000L != 0) {
            throw new IllegalArgumentException("the clock moves forward by whole seconds, got " + by);
        }
        moved = moved.plus(by);
        try {
            Files.writeString(offsetFile, "+" + moved.toSeconds() + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException("could not move the clock of redis-server on port " + port, e);
        }
    }

    /** How far its clock was moved in all. */
    public synchronized Duration moved() {
        return moved;
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
