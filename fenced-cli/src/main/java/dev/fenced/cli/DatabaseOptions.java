package dev.fenced.cli;

import picocli.CommandLine.Option;

/** {@code --db-url}, for the commands that read or write the refund rows. */
public final class DatabaseOptions {
    @Option(names = "--db-url", paramLabel = "JDBC_URL", defaultValue = "${env:FENCED_DB_URL}",
            description = "the database, jdbc:postgresql://... or jdbc:mariadb://... (env FENCED_DB_URL)")
    public String dbUrl;

    /** {@code --db-url}, or the usage error of a command that needs it; checked before anything connects. */
    public String requireUrl() {
        return UsageException.requireGiven(dbUrl, "--db-url", "FENCED_DB_URL");
    }
}
