package dev.fenced.lab;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;

/**
 * A whole comparison: the measured table ({@link ComparisonRow}s, in the order the mechanisms
 * ran) and every run it was measured from. Serialized as the {@code compare --json} document.
 *
 * @param refunds refunds in the story each run settles
 * @param stalledRefund the refund worker A is frozen on
 */
@JsonPropertyOrder({"speed", "runs", "refunds", "stalledRefund", "rows", "results"})
record ComparisonReport(double speed, int runs, int refunds, String stalledRefund, List<ComparisonRow> rows, List<ComparisonRun> results) {

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
