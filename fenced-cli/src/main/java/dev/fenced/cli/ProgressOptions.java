package dev.fenced.cli;

import dev.fenced.internal.Durations;
import java.time.Duration;
import picocli.CommandLine.Option;

/** {@code --quiet} and the hidden {@code --progress-every} of every long command; see {@link Progress}. */
public final class ProgressOptions {
    @Option(names = "--quiet", description = "no progress on stderr")
    boolean quiet;

    /** How often a line of progress is printed when stderr is not a terminal; tests shorten it. */
    @Option(names = "--progress-every", hidden = true, defaultValue = "5s", converter = DurationConverter.class)
    Duration every;

    /** A bar or periodic lines on stderr, or nothing with {@code --quiet}. */
    public Progress start(String task, long total, String unit) {
        if (every.isNegative() || every.isZero()) {
            throw new UsageException("--progress-every must be positive, got " + Durations.human(every));
        }
        return quiet ? Progress.off() : Progress.of(task, total, unit, every);
    }
}
