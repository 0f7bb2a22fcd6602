package dev.fenced.lab;

import static dev.fenced.cli.TimelinePage.esc;
import static dev.fenced.cli.TimelinePage.number;

import dev.fenced.cli.TimelineChart;
import dev.fenced.cli.TimelinePage;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A self-contained HTML report of a comparison (no scripts, no external assets): where and how it
 * ran, the measured table, one timeline per run on one axis of article seconds shared by every run,
 * with a legend and the count of every kind of mark beside it, and the outage a crashed holder
 * caused under each mechanism.
 */
final class HtmlReport {
    private static final Set<String> WRITES = Set.of("claimed", "confirmed");
    private static final int OUTAGE_WIDTH = 960;
    private static final int OUTAGE_LEFT = 300;
    private static final int OUTAGE_ROW = 26;

    private HtmlReport() {
    }

    static String render(ComparisonReport report) {
        List<TimelineChart> charts = report.results().stream().map(HtmlReport::chart).toList();
        double axisEnd = TimelineChart.axisEnd(charts);
        StringBuilder html = new StringBuilder("<header><h1>What each mechanism guarantees, measured</h1>\n")
                .append(metadata(report)).append("</header>\n");
        html.append("<section><h2>The table</h2><p>Figures are min/median/max over the runs; times in article seconds (real seconds")
                .append(" &times; ").append(number(report.speed())).append(").</p>\n<div class=\"scroll\"><table><tr><th>mechanism</th>")
                .append("<th>double refunds</th><th>stale writes accepted</th><th>lost or stuck</th><th>settled (s)</th>")
                .append("<th>blocked after crash (s)</th><th>expected</th><th>verdict</th></tr>\n");
        for (ComparisonRow row : report.rows()) {
            html.append("<tr data-mechanism=\"").append(esc(row.mechanism())).append("\"><td>").append(esc(row.label())).append("</td><td>")
                    .append(esc(row.doubleRefunds())).append("</td><td>").append(esc(row.staleWritesAccepted())).append("</td><td>")
                    .append(esc(row.lostOrStuck())).append("</td><td>").append(esc(row.settledArticleSeconds())).append("</td><td>")
                    .append(number(row.blockedAfterCrashArticleSeconds())).append("</td><td>").append(esc(row.expected()))
                    .append("</td><td").append(row.verdict().startsWith("DIFFERS") ? " class=\"differs\"" : "").append(">")
                    .append(esc(row.verdict())).append("</td></tr>\n");
        }
        html.append("</table></div></section>\n<section><h2>Timelines</h2>\n<p>One axis for every run, in article seconds from the moment worker A")
                .append(" takes its lease (token 33). A is frozen with SIGSTOP on ").append(esc(report.stalledRefund())).append("; Redis expires its lease; worker B")
                .append(" takes over (token 34); A is resumed with SIGCONT and goes on with its stale token.</p>\n")
                .append(TimelinePage.legend(TimelineChart.kinds(charts)));
        for (int i = 0; i < charts.size(); i++) {
            ComparisonRun run = report.results().get(i);
            html.append(charts.get(i).figure(axisEnd, "article s", caption(run)));
        }
        html.append("</section>\n<section><h2>Blocked after a crash</h2>\n<p>A holder killed with SIGKILL keeps the merchant blocked")
                .append(" until Redis expires its lease: the price of the TTL, paid by every mechanism.</p>\n")
                .append("<div class=\"scroll\">").append(outage(report.rows())).append("</div></section>\n");
        return TimelinePage.page("fenced compare", html.toString());
    }

    private static String metadata(ComparisonReport report) {
        ComparisonReport.Environment env = report.environment();
        Map<String, String> facts = new LinkedHashMap<>();
        facts.put("version", "fenced " + env.fencedVersion());
        facts.put("date", env.generatedAt());
        facts.put("story", report.refunds() + " refunds of merchant " + Scenario.MERCHANT + ", worker A frozen on " + report.stalledRefund());
        facts.put("speed", "x" + number(report.speed()) + " (every article time divided by it)");
        facts.put("runs", report.runs() + " per mechanism");
        facts.put("redis", env.redis());
        facts.put("database", env.database());
        facts.put("java", env.java());
        facts.put("machine", env.machine());
        return TimelinePage.metadata(facts);
    }

    private static String caption(ComparisonRun run) {
        DemoReport r = run.report();
        return r.label() + ", run " + run.run() + ": " + r.duplicates() + " double refund" + (r.duplicates() == 1 ? "" : "s") + ", "
                + r.staleWritesAccepted() + " stale write" + (r.staleWritesAccepted() == 1 ? "" : "s") + " accepted, worker A ended "
                + r.workerA().outcome();
    }

    /**
     * One run: A's and B's milestones and leases (A's cut where Redis expired it), the pause, the
     * stale writes and the gateway's second refunds. Article second 0 is when A took its lease, as
     * in the article; the seeding and the workers' start before it are left out.
     */
    static TimelineChart chart(ComparisonRun run) {
        DemoReport r = run.report();
        double perMs = r.speed() / 1000.0;
        long origin = origin(r);
        // The report keeps only the workers' milestones: their writes are drawn from the stale-write list, which is complete.
        List<TimelineChart.Entry> entries = r.timeline().stream().filter(e -> !e.isNote() && !WRITES.contains(e.event()))
                .map(e -> new TimelineChart.Entry(since(origin, e.elapsedMs()), e.worker(), e.event(), e.refund(), e.token(), e.detail()))
                .toList();
        TimelineChart.Builder chart = TimelineChart.builder(r.label() + ", run " + run.run())
                .attribute("mechanism", r.mechanism()).attribute("run", Integer.toString(run.run()))
                .lane("A", "worker A").lane("B", "worker B").lane("gateway", "gateway")
                .entries(entries, perMs);
        r.timeline().stream().filter(e -> e.isNote() && e.event().startsWith("Redis expired A's lease")).findFirst()
                .ifPresent(expired -> LabMarks.leaseExpired(chart, "A", since(origin, expired.elapsedMs()) * perMs));
        chart.span("A", LabMarks.PAUSE, since(origin, r.pausedAtMs()) * perMs, since(origin, r.resumedAtMs()) * perMs, null);
        for (DemoReport.StaleWrite write : r.staleWrites()) {
            chart.mark("A", LabMarks.STALE, since(origin, write.elapsedMs()) * perMs, write.refund(),
                    "stale " + write.event() + " " + write.refund() + " accepted");
        }
        // Every refund of a reference the gateway holds twice is listed; the first of each is the one owed, the others the double refunds.
        Set<String> first = new HashSet<>();
        r.duplicateRefunds().stream().sorted(Comparator.comparingLong(DemoReport.DuplicateRefund::elapsedMs)).forEach(dup -> {
            if (!first.add(dup.refund())) {
                chart.mark("gateway", LabMarks.DUPLICATE, since(origin, dup.elapsedMs()) * perMs, dup.refund(),
                        dup.refund() + " created again as " + dup.gatewayId());
            }
        });
        return chart.build();
    }

    /** When worker A took its lease, in milliseconds since the run began; 0 if it never did. */
    static long origin(DemoReport r) {
        return r.timeline().stream().filter(e -> "A".equals(e.worker()) && "acquired".equals(e.event())).mapToLong(TimelineEntry::elapsedMs)
                .findFirst().orElse(0);
    }

    private static long since(long origin, long elapsedMs) {
        return Math.max(0, elapsedMs - origin);
    }

    /** A bar per mechanism: how long a SIGKILLed holder kept the merchant blocked, on an axis of its own. */
    private static String outage(List<ComparisonRow> rows) {
        List<Double> ticks = TimelineChart.ticks(rows.stream().mapToDouble(ComparisonRow::blockedAfterCrashArticleSeconds).max().orElse(1));
        double end = ticks.get(ticks.size() - 1);
        double scale = (OUTAGE_WIDTH - OUTAGE_LEFT - 80) / Math.max(end, 1e-9);
        int height = rows.size() * OUTAGE_ROW + 34;
        StringBuilder svg = new StringBuilder("<svg class=\"outage\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ")
                .append(OUTAGE_WIDTH).append(' ').append(height).append("\" role=\"img\" aria-label=\"blocked after a crash\">\n");
        int bottom = rows.size() * OUTAGE_ROW + 6;
        for (double tick : ticks) {
            int x = OUTAGE_LEFT + (int) Math.round(tick * scale);
            svg.append("<g class=\"tick\" data-seconds=\"").append(number(tick)).append("\"><line x1=\"").append(x).append("\" y1=\"4\" x2=\"")
                    .append(x).append("\" y2=\"").append(bottom).append("\" stroke=\"#ddd\"/><text x=\"").append(x).append("\" y=\"")
                    .append(bottom + 16).append("\" font-size=\"11\" text-anchor=\"middle\">").append(number(tick)).append(" s</text></g>\n");
        }
        for (int i = 0; i < rows.size(); i++) {
            ComparisonRow row = rows.get(i);
            int y = 8 + i * OUTAGE_ROW;
            int width = Math.max(2, (int) Math.round(row.blockedAfterCrashArticleSeconds() * scale));
            svg.append("<g class=\"outage-bar\" data-mechanism=\"").append(esc(row.mechanism())).append("\" data-seconds=\"")
                    .append(number(row.blockedAfterCrashArticleSeconds())).append("\"><text x=\"8\" y=\"").append(y + 14)
                    .append("\" font-size=\"12\">").append(esc(row.label())).append("</text><rect x=\"").append(OUTAGE_LEFT).append("\" y=\"")
                    .append(y).append("\" width=\"").append(width).append("\" height=\"18\" fill=\"#c66\"/><text x=\"")
                    .append(OUTAGE_LEFT + width + 6).append("\" y=\"").append(y + 14).append("\" font-size=\"12\">")
                    .append(number(row.blockedAfterCrashArticleSeconds())).append(" s</text></g>\n");
        }
        return svg.append("</svg>").toString();
    }
}
