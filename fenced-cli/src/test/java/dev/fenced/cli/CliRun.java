package dev.fenced.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** One in-process run of the command line, with what it printed. */
public record CliRun(int exit, String stdout, String stderr) {
    public static synchronized CliRun of(String... args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        System.setOut(new PrintStream(stdout, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
        try {
            int exit = FencedCli.run(args);
            return new CliRun(exit, stdout.toString(StandardCharsets.UTF_8), stderr.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }

    public static CliRun of(List<String> args) {
        return of(args.toArray(String[]::new));
    }

    /** Exactly one line on stderr, and nothing that looks like a stack trace. */
    public boolean oneLineError() {
        return stderr.strip().lines().count() == 1 && !stderr.contains("\tat ") && !stderr.contains("Exception:")
                && !stderr.contains("Exception ");
    }

    public String both() {
        return stdout + stderr;
    }
}
