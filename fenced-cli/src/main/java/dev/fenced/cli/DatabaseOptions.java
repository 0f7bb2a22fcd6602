package dev.fenced.cli;

import picocli.CommandLine.Option;

/** {@code --db-url}, for the commands that read or write the refund rows. */
public final class DatabaseOptions {
    @Option(names = "--db-url", paramLabel = "JDBC_URL", defaultValue = "${env:FENCED_DB_URL}",
            description = "the database, jdbc:postgresql://... or jdbc:mariadb://... (env FENCED_DB_URL)")
    public String dbUrl;
}
