package dev.fenced.cli;

import dev.fenced.internal.Redaction;
import dev.fenced.internal.Redaction.Secret;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The secrets of every URL this process was given, on its command line or in its environment, and
 * output streams that never print them: every line written to stdout or stderr is scrubbed before
 * it leaves the process, whatever produced it (a message, an event, a driver's error).
 */
final class Secrets {
    private Secrets() {
    }

    /** The secrets in every argument that holds a URL and in every {@code FENCED_*} variable. */
    static Set<Secret> of(String[] args, Map<String, String> env) {
        Set<Secret> secrets = new LinkedHashSet<>();
        for (String arg : args) {
            if (arg != null && arg.contains("://")) {
                int eq = arg.startsWith("--") ? arg.indexOf('=') : -1;
                secrets.addAll(Redaction.secretsOf(eq > 0 ? arg.substring(eq + 1) : arg));
            }
        }
        env.forEach((name, value) -> {
            if (name.startsWith("FENCED_") && value != null) {
                secrets.addAll(Redaction.secretsOf(value));
            }
        });
        return secrets;
    }

    /** A stream that writes to {@code target} line by line, each line scrubbed of {@code secrets}. */
    static PrintStream scrubbing(PrintStream target, Set<Secret> secrets) {
        return new PrintStream(new LineScrubber(target, secrets), true, StandardCharsets.UTF_8);
    }

    private static final class LineScrubber extends OutputStream {
        private final PrintStream target;
        private final Set<Secret> secrets;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();

        LineScrubber(PrintStream target, Set<Secret> secrets) {
            this.target = target;
            this.secrets = secrets;
        }

        @Override
        public synchronized void write(int b) {
            line.write(b);
            if (b == '\n') {
                emit();
            }
        }

        @Override
        public synchronized void write(byte[] bytes, int offset, int length) {
            for (int i = offset; i < offset + length; i++) {
                write(bytes[i]);
            }
        }

        @Override
        public synchronized void flush() {
            emit();
            target.flush();
        }

        private void emit() {
            if (line.size() == 0) {
                return;
            }
            target.print(Redaction.scrub(line.toString(StandardCharsets.UTF_8), secrets));
            line.reset();
        }
    }
}
