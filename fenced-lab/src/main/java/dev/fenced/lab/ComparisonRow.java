package dev.fenced.lab;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** One measured row of the article's table, and the text table they make together. */
final class ComparisonRow {
    private ComparisonRow() {
    }

    static Map<String, Object> summarize(Mechanism mechanism, List<Map<String, Object>> results, double outageArticleSeconds) {
        List<Double> duplicates = numbers(results, "duplicates");
        List<Double> stale = numbers(results, "staleWritesAccepted");
        List<Double> lost = numbers(results, "lostOrStuck");
        List<Double> settled = numbers(results, "settledArticleSeconds");
        long runsWithDuplicates = duplicates.stream().filter(d -> d > 0).count();
        long runsWithStaleWrites = stale.stream().filter(d -> d > 0).count();
        long runsDamaged = results.stream().filter(r -> ((Number) r.get("duplicates")).longValue() > 0
                || ((Number) r.get("staleWritesAccepted")).longValue() > 0).count();

        Map<String, Object> row = new LinkedHashMap<>();
        row.put("mechanism", mechanism.key());
        row.put("label", mechanism.label());
        row.put("runs", results.size());
        row.put("doubleRefunds", stats(duplicates));
        row.put("runsWithDoubleRefunds", runsWithDuplicates);
        row.put("staleWritesAccepted", stats(stale));
        row.put("runsWithStaleWrites", runsWithStaleWrites);
        row.put("lostOrStuck", stats(lost));
        row.put("settledArticleSeconds", stats(settled));
        row.put("runsNeverSettled", results.size() - settled.size());
        row.put("blockedAfterCrashArticleSeconds", outageArticleSeconds);
        row.put("expected", expectation(mechanism));
        row.put("verdict", verdict(mechanism, results, runsDamaged));
        return row;
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

    private static String verdict(Mechanism mechanism, List<Map<String, Object>> results, long runsDamaged) {
        int runs = results.size();
        if (mechanism.fencing()) {
            long stale = results.stream().mapToLong(r -> ((Number) r.get("staleWritesAccepted")).longValue()).sum();
            long maxDuplicates = results.stream().mapToLong(r -> ((Number) r.get("duplicates")).longValue()).max().orElse(0);
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

    static String table(List<Map<String, Object>> rows, int runs, double speed) {
        StringBuilder out = new StringBuilder();
        out.append(String.format("What each mechanism guarantees, measured (%d run%s each, speed x%s; figures min/median/max;"
                + " times in article seconds)%n%n", runs, runs == 1 ? "" : "s", speed));
        String format = "%-44s %-14s %-14s %-11s %-12s %-14s %s%n";
        out.append(String.format(format, "mechanism", "double refunds", "stale writes", "lost/stuck", "settled (s)", "blocked after", "verdict"));
        out.append(String.format(format, "", "", "accepted", "", "", "crash (s)", ""));
        for (Map<String, Object> row : rows) {
            out.append(String.format(format, row.get("label"), row.get("doubleRefunds"), row.get("staleWritesAccepted"),
                    row.get("lostOrStuck"), row.get("settledArticleSeconds"), row.get("blockedAfterCrashArticleSeconds"), row.get("verdict")));
        }
        return out.toString();
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

    static List<Double> numbers(List<Map<String, Object>> results, String key) {
        return results.stream().map(r -> r.get(key)).filter(v -> v != null).map(v -> ((Number) v).doubleValue()).toList();
    }
}
