package dev.fenced.testing.servers;

import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A second JVM on this test's class path, for holders that must be real processes: frozen whole
 * with SIGSTOP (its renewal threads with it), resumed with SIGCONT, told to go on by a line on its
 * stdin. Its output is read line by line; every wait is bounded. Closing kills it.
 */
public final class JavaProcess implements AutoCloseable {
    /** Put after the process's last line; compared by identity, so no line it prints can be taken for it. */
    @SuppressWarnings("StringOperationCanBeSimplified")
    private static final String END_OF_OUTPUT = new String("(end of output)");

    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private JavaProcess(Process process) {
        this.process = process;
        Thread reader = new Thread(this::readLines, "output of " + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code mainClass} with {@code args} in a new JVM on this JVM's class path, stderr into stdout. */
    public static JavaProcess start(Class<?> mainClass, List<String> args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), mainClass.getName()));
        command.addAll(args);
        return new JavaProcess(new ProcessBuilder(command).redirectErrorStream(true).start());
    }

    /** The first line from now on that starts with {@code prefix}; fails with what it printed instead after 60 s or at its end. */
    public String awaitLine(String prefix) throws InterruptedException {
        List<String> seen = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            String line = lines.poll(1, TimeUnit.SECONDS);
            if (line == null) {
                continue;
            }
            if (line == END_OF_OUTPUT) {
                lines.add(END_OF_OUTPUT); // for a later look
                break; // the process ended without it: no point waiting out the deadline
            }
            if (line.startsWith(prefix)) {
                return line;
            }
            seen.add(line);
        }
        throw new AssertionError("no line starting with '" + prefix + "'; the process printed:\n" + String.join("\n", seen));
    }

    /** Freezes the whole process (SIGSTOP) and returns once the kernel shows it stopped. */
    public void stop() throws IOException, InterruptedException {
        signal("STOP");
        Path stat = Path.of("/proc", Long.toString(process.pid()), "stat");
        // The kernel stops the process a moment after kill returns: polled, up to a second.
        await("the kernel shows process " + process.pid() + " stopped").atMost(Duration.ofSeconds(1))
                .pollInterval(Duration.ofMillis(20)).until(() -> {
                    String text = Files.readString(stat);
                    return text.charAt(text.lastIndexOf(')') + 2);
                }, state -> state == 'T');
    }

    /** Resumes a stopped process (SIGCONT). */
    public void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    /** Writes {@code line} to its stdin and closes it. */
    public void tell(String line) throws IOException {
        try (OutputStream in = process.getOutputStream()) {
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        }
    }

    /** Its exit code, waiting up to {@code timeout} for it to end. */
    public int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("process " + process.pid() + " did not end within " + timeout);
        }
        return process.exitValue();
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }

    private void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
        }
    }

    private void readLines() {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = out.readLine()) != null; ) {
                lines.add(line);
            }
        } catch (IOException ignored) {
            // the process ended
        }
        lines.add(END_OF_OUTPUT);
    }
}
