package dev.fenced.lab;

import dev.fenced.cli.EventCodec;
import dev.fenced.cli.EventLine;
import dev.fenced.cli.FencedCli;
import dev.fenced.internal.Durations;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * A settlement worker in a JVM of its own, started from this JVM's class path: a real OS process
 * that can be frozen with SIGSTOP, resumed with SIGCONT and killed with SIGKILL. Its stdout lines
 * are read with {@link EventCodec} and collected as they arrive; a line that looks like JSON but is
 * no event is kept with stderr, for the diagnostics.
 */
final class WorkerProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Writer stdin;
    /** Appended by a reader thread, read while it appends: a copy-on-write list would copy itself per line, quadratic in a long run. */
    private final Queue<EventLine> events = new ConcurrentLinkedQueue<>();
    private final Queue<String> stderr = new ConcurrentLinkedQueue<>();
    private final Consumer<EventLine> listener;

    private WorkerProcess(String name, Process process, Consumer<EventLine> listener) {
        this.name = name;
        this.process = process;
        this.listener = listener;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread out = new Thread(() -> readLines(new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)), true),
                "worker-" + name + "-stdout");
        Thread err = new Thread(() -> readLines(new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8)), false),
                "worker-" + name + "-stderr");
        out.setDaemon(true);
        err.setDaemon(true);
        out.start();
        err.start();
    }

    /** Starts {@code fenced <args>} in a new JVM with {@code env} added to this process's environment. */
    static WorkerProcess start(String name, List<String> args, Map<String, String> env) {
        return start(name, args, env, event -> { });
    }

    /** As {@link #start(String, List, Map)}, also handing every event to {@code listener} as it arrives, on a reader thread. */
    static WorkerProcess start(String name, List<String> args, Map<String, String> env, Consumer<EventLine> listener) {
        return start(name, args, env, listener, List.of());
    }

    /**
     * As {@link #start(String, List, Map, Consumer)}, the JVM started by {@code launcher} (e.g.
     * {@code ip netns exec <namespace>}), which must exec it, so that signals reach the JVM itself.
     */
    static WorkerProcess start(String name, List<String> args, Map<String, String> env, Consumer<EventLine> listener, List<String> launcher) {
        List<String> command = new ArrayList<>(launcher);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-XX:+UseSerialGC");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(FencedCli.class.getName());
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().putAll(env);
        try {
            return new WorkerProcess(name, builder.start(), listener);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start worker " + name, e);
        }
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Closes the worker's stdin: a worker that reads its jobs from stdin then finishes and exits. */
    void closeStdin() {
        try {
            stdin.close();
        } catch (IOException ignored) {
            // already gone
        }
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    /** The events so far, in order. */
    List<EventLine> events() {
        return List.copyOf(events);
    }

    /** Sends a signal with the system's kill command: STOP, CONT or KILL. */
    void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).redirectErrorStream(true).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not run kill", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted sending " + signal, e);
        }
    }

    /** True while the kernel reports the process as stopped (state T in /proc/pid/stat). */
    boolean isStopped() {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("T");
        } catch (IOException e) {
            return false;
        }
    }

    void writeLine(String line) {
        try {
            stdin.write(line + "\n");
            stdin.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("worker " + name + " closed its stdin", e);
        }
    }

    Optional<EventLine> firstEvent(Predicate<EventLine> predicate) {
        return events.stream().filter(predicate).findFirst();
    }

    /** Waits for an event; fails with the worker's stderr when it exits or the time runs out first. */
    EventLine awaitEvent(Predicate<EventLine> predicate, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            Optional<EventLine> found = firstEvent(predicate);
            if (found.isPresent()) {
                return found.get();
            }
            if (!process.isAlive() && firstEvent(predicate).isEmpty()) {
                sleep(50); // let the reader drain the last lines
                return firstEvent(predicate).orElseThrow(() -> new IllegalStateException(
                        "worker " + name + " exited with " + process.exitValue() + " before " + what + ": " + stderrTail()));
            }
            sleep(5);
        }
        throw new IllegalStateException("worker " + name + " did not reach " + what + " within " + Durations.human(timeout) + ": " + stderrTail());
    }

    int awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("worker " + name + " still running after " + Durations.human(timeout) + ": " + stderrTail());
            }
            sleep(50);
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for worker " + name, e);
        }
    }

    String stderrTail() {
        List<String> lines = List.copyOf(stderr);
        return lines.isEmpty() ? "(no stderr)" : String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
    }

    private void readLines(BufferedReader reader, boolean isStdout) {
        try (reader) {
            String line;
            while ((line = reader.readLine()) != null) {
                if (!isStdout) {
                    stderr.add(line);
                } else if (line.startsWith("{")) { // other text on stdout (a summary line) is neither an event nor a diagnostic
                    Optional<EventLine> event = EventCodec.read(line);
                    if (event.isPresent()) {
                        events.add(event.get());
                        listener.accept(event.get());
                    } else {
                        stderr.add(line);
                    }
                }
            }
        } catch (IOException ignored) {
            // the process ended
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
    }
}
