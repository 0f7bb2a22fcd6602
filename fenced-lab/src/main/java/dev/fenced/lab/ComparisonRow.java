package dev.fenced.lab;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * One measured row of the article's table: a mechanism's runs summed up, what the article expects
 * of it and whether the runs agree. The figures are min/median/max over the runs ({@code "-"} when
 * there is none), as text.
 *
 * @param runsNeverSettled runs in which some refund was never settled (they have no settled time)
 * @param blockedAfterCrashArticleSeconds how long a SIGKILLed holder kept the merchant blocked
 */
@JsonPropertyOrder({"mechanism", "label", "runs", "doubleRefunds", "runsWithDoubleRefunds", "staleWritesAccepted", "runsWithStaleWrites",
        "lostOrStuck", "settledArticleSeconds", "runsNeverSettled", "blockedAfterCrashArticleSeconds", "expected", "verdict"})
record ComparisonRow(String mechanism, String label, int runs, String doubleRefunds, long runsWithDoubleRefunds, String staleWritesAccepted,
                     long runsWithStaleWrites, String lostOrStuck, String settledArticleSeconds, int runsNeverSettled,
                     double blockedAfterCrashArticleSeconds, String expected, String verdict) {

    static ComparisonRow of(Mechanism mechanism, List<DemoReport> results, double outageArticleSeconds) {
        List<Double> duplicates = numbers(results, DemoReport::duplicates);
        List<Double> stale = numbers(results, DemoReport::staleWritesAccepted);
        List<Double> settled = numbers(results, DemoReport::settledArticleSeconds);
        long runsDamaged = results.stream().filter(r -> r.duplicates() > 0 || r.staleWritesAccepted() > 0).count();
        return new ComparisonRow(mechanism.key(), mechanism.label(), results.size(), stats(duplicates),
                duplicates.stream().filter(d -> d > 0).count(), stats(stale), stale.stream().filter(d -> d > 0).count(),
                stats(numbers(results, DemoReport::lostOrStuck)), stats(settled), results.size() - settled.size(), outageArticleSeconds,
                expectation(mechanism), verdict(mechanism, results, runsDamaged));
    }

    private static String expectation(Mechanism mechanism) {
        if (mechanism.fencing() && mechanism.idempotency()) {
            return "no double refund, no stale write";
        }
        if (mechanism.fencing()) {
            return "only the duplicate the fence cannot see: the gateway call in flight during the pause; no stale write";
        }
        return "double refunds or stale writes accepted";
    }

    private static String verdict(Mechanism mechanism, List<DemoReport> results, long runsDamaged) {
        int runs = results.size();
        if (mechanism.fencing()) {
            long stale = results.stream().mapToLong(DemoReport::staleWritesAccepted).sum();
            long maxDuplicates = results.stream().mapToLong(DemoReport::duplicates).max().orElse(0);
            long limit = mechanism.idempotency() ? 0 : 1;
            if (stale == 0 && maxDuplicates <= limit) {
                return "as expected in " + runs + " of " + runs + " runs";
            }
            return "DIFFERS: " + stale + " stale writes and up to " + maxDuplicates + " double refunds where the fence should allow "
                    + limit + "; the database accepted a write it should have refused: a bug";
        }
        if (runsDamaged == runs) {
            return "as expected: damage in " + runs + " of " + runs + " runs";
        }
        return "DIFFERS: damage in " + runsDamaged + " of " + runs + " runs; in the others the stale worker found nothing left to"
                + " write when it woke (its lease check or state check came first), which is luck, not a guarantee";
    }

    static String stats(List<? extends Number> values) {
        if (values.isEmpty()) {
            return "-";
        }
        double[] sorted = values.stream().mapToDouble(Number::doubleValue).sorted().toArray();
        double median = sorted.length % 2 == 1 ? sorted[sorted.length / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
        if (sorted.length == 1) {
            return format(sorted[0]);
        }
        return format(sorted[0]) + "/" + format(median) + "/" + format(sorted[sorted.length - 1]);
    }

    private static String format(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : String.format("%.1f", value);
    }

    /** One figure of every run that has it. */
    private static List<Double> numbers(List<DemoReport> results, Function<DemoReport, ? extends Number> figure) {
        return results.stream().map(figure).filter(Objects::nonNull).map(Number::doubleValue).toList();
    }
}
