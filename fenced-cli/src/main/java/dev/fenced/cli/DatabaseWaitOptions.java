package dev.fenced.cli;

import dev.fenced.internal.Durations;
import java.time.Duration;
import picocli.CommandLine.Option;

/** {@code --lock-timeout}, {@code --statement-timeout}, {@code --db-socket-timeout}: for the commands that hold a lease. */
public final class DatabaseWaitOptions {
    @Option(names = "--lock-timeout", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "longest wait for a row lock another session holds (a holder stalled inside its transaction); then the run"
                    + " gives up (default: a third of --ttl; 0s: the server's own setting)")
    Duration lockTimeout;

    @Option(names = "--statement-timeout", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "longest a database statement runs, lock waits included (default: two thirds of --ttl; 0s: the server's own)")
    Duration statementTimeout;

    @Option(names = "--db-socket-timeout", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "longest the driver waits for the database to answer at all (default: --ttl; 0s: no limit)")
    Duration socketTimeout;

    /**
     * The bounds given, the others derived from the lease's {@code ttl} ({@link DatabaseWaits#forTtl}).
     *
     * @throws UsageException when they cannot work: a lock wait not below the statement's time or the TTL
     */
    public DatabaseWaits resolve(Duration ttl) {
        if (lockTimeout != null && lockTimeout.compareTo(ttl) >= 0) {
            throw new UsageException("--lock-timeout (" + Durations.human(lockTimeout) + ") must be below --ttl ("
                    + Durations.human(ttl) + "): a claim behind a stalled holder must give up while its own lease is safe");
        }
        DatabaseWaits derived = DatabaseWaits.forTtl(ttl);
        return new DatabaseWaits(lockTimeout != null ? lockTimeout : derived.lockTimeout(),
                statementTimeout != null ? statementTimeout : derived.statementTimeout(),
                socketTimeout != null ? socketTimeout : derived.socketTimeout());
    }
}
