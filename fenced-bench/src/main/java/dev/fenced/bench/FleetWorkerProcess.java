package dev.fenced.bench;

import dev.fenced.cli.FencedCli;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * One {@code fenced worker} of the fleet in a JVM of its own, started from this JVM's class path
 * with the JVM's default settings, as an operator would run it. SIGTERM drains it; its last line
 * says how many jobs it did and where their time went.
 */
final class FleetWorkerProcess implements AutoCloseable {
    private static final Pattern DRAINED = Pattern.compile("worker \\S+ drained: (\\d+) jobs done, (\\d+) retried, (\\d+) handed back, "
            + "(\\d+) left to another holder, (\\d+) dead-lettered; (\\d+) ms settling, (\\d+) ms with the broker");

    /** The worker's own account of its life, from its last line. */
    record Drained(long done, long retried, long handedBack, long left, long deadLettered, long settleMillis, long brokerMillis) {
    }

    private final String name;
    private final Process process;
    private final List<String> stdout = new CopyOnWriteArrayList<>();
    private final List<String> stderr = new CopyOnWriteArrayList<>();
    private final Thread outReader;
    private final Thread errReader;

    private FleetWorkerProcess(String name, Process process) {
        this.name = name;
        this.process = process;
        this.outReader = reader(process.getInputStream(), stdout, "stdout");
        this.errReader = reader(process.getErrorStream(), stderr, "stderr");
    }

    /** Starts {@code fenced worker <args>}; {@code jvmOptions} go before the class path. */
    static FleetWorkerProcess start(String name, List<String> jvmOptions, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(absoluteClassPath());
        command.add(FencedCli.class.getName());
        command.add("worker");
        command.add("--name");
        command.add(name);
        command.addAll(args);
        try {
            return new FleetWorkerProcess(name, new ProcessBuilder(command).start());
        } catch (IOException e) {
            throw new UncheckedIOException("could not start worker " + name, e);
        }
    }

    /** This JVM's class path with every entry absolute, so that a worker finds it from any directory. */
    private static String absoluteClassPath() {
        return Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .map(entry -> Path.of(entry).toAbsolutePath().toString()).collect(Collectors.joining(File.pathSeparator));
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    /** Waits for "worker NAME: taking jobs from ...": connected to NATS, Redis and the database, and idle. */
    void awaitReady(Duration timeout) throws InterruptedException {
        String ready = "worker " + name + ": taking jobs from ";
        long deadline = System.nanoTime() + timeout.toNanos();
        while (stdout.stream().noneMatch(line -> line.startsWith(ready))) {
            if (!process.isAlive()) {
                throw new IllegalStateException("worker " + name + " exited with " + process.exitValue() + " before taking jobs: " + tail());
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("worker " + name + " did not take jobs within " + timeout + ": " + tail());
            }
            Thread.sleep(20);
        }
    }

    boolean alive() {
        return process.isAlive();
    }

    /** Sends SIGTERM: the worker stops taking jobs, finishes what is in flight and exits. */
    void requestDrain() {
        // SIGTERM through the handle: Process.destroy() would also close our end of the worker's
        // stdout, and its last line, the one this bench reads, would be lost.
        process.toHandle().destroy();
    }

    /** Waits for the exit after {@link #requestDrain()}, requires exit 0 and reads the worker's last line. */
    Drained awaitDrained(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("worker " + name + " still draining after " + timeout + ": " + tail());
        }
        outReader.join(5_000);
        errReader.join(5_000);
        if (process.exitValue() != 0) {
            throw new IllegalStateException("worker " + name + " exited with " + process.exitValue() + " after SIGTERM: " + tail());
        }
        for (String line : stdout) {
            Matcher m = DRAINED.matcher(line);
            if (m.find()) {
                return new Drained(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)),
                        Long.parseLong(m.group(4)), Long.parseLong(m.group(5)), Long.parseLong(m.group(6)), Long.parseLong(m.group(7)));
            }
        }
        throw new IllegalStateException("worker " + name + " drained without its summary line: " + tail());
    }

    /** The last lines of stderr, or of stdout when stderr is empty: for the diagnostics. */
    String tail() {
        List<String> lines = stderr.isEmpty() ? stdout : stderr;
        return lines.isEmpty() ? "(no output)" : String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
    }

    private Thread reader(InputStream stream, List<String> into, String what) {
        Thread thread = new Thread(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    into.add(line);
                }
            } catch (IOException ended) {
                // the process ended
            }
        }, "fleet-" + name + "-" + what);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    /** Kills a worker still running (a failed run); a drained worker is gone already. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
