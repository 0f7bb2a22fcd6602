package dev.fenced.lab;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * A whole comparison: the measured table ({@link ComparisonRow}s, in the order the mechanisms
 * ran) and every run it was measured from. Serialized as the {@code compare --json} document.
 *
 * @param refunds refunds in the story each run settles
 * @param stalledRefund the refund worker A is frozen on
 */
@JsonPropertyOrder({"speed", "runs", "refunds", "stalledRefund", "rows", "results", "environment"})
record ComparisonReport(double speed, int runs, int refunds, String stalledRefund, List<ComparisonRow> rows, List<ComparisonRun> results,
                        Environment environment) {

    /**
     * Where and when the comparison ran, for the report's header.
     *
     * @param generatedAt when the report was made, ISO-8601 in UTC
     * @param redis the Redis server, e.g. "redis-server 6.2.6 (embedded)"
     * @param database the database server, e.g. "PostgreSQL 16.4 (embedded)"
     * @param machine the operating system and the number of cores
     */
    @JsonPropertyOrder({"fencedVersion", "generatedAt", "redis", "database", "java", "machine"})
    record Environment(String fencedVersion, String generatedAt, String redis, String database, String java, String machine) {

        static Environment of(String redis, String database) {
            return new Environment(dev.fenced.cli.FencedCli.VERSION, Instant.now().truncatedTo(ChronoUnit.SECONDS)
                    .toString(), redis, database, System.getProperty("java.vendor") + " " + System.getProperty("java.version"),
                    System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", " + Runtime.getRuntime().availableProcessors()
                            + " cores");
        }
    }

    ComparisonReport {
        rows = List.copyOf(rows);
        results = List.copyOf(results);
    }

    /** The table as text, one line per mechanism. */
    String table() {
        StringBuilder out = new StringBuilder();
        out.append(String.format("What each mechanism guarantees, measured (%d run%s each, speed x%s; figures min/median/max;"
                + " times in article seconds)%n%n", runs, runs == 1 ? "" : "s", speed));
        String format = "%-44s %-14s %-14s %-11s %-12s %-14s %s%n";
        out.append(String.format(format, "mechanism", "double refunds", "stale writes", "lost/stuck", "settled (s)", "blocked after", "verdict"));
        out.append(String.format(format, "", "", "accepted", "", "", "crash (s)", ""));
        for (ComparisonRow row : rows) {
            out.append(String.format(format, row.label(), row.doubleRefunds(), row.staleWritesAccepted(), row.lostOrStuck(),
                    row.settledArticleSeconds(), row.blockedAfterCrashArticleSeconds(), row.verdict()));
        }
        return out.toString();
    }
}
