package dev.fenced.lab;

import java.util.List;

/**
 * A self-contained HTML report of a comparison: the measured table, then one timeline per run as
 * inline SVG (no scripts, no external assets). Lanes: worker A, worker B, the gateway.
 */
final class HtmlReport {
    private static final int WIDTH = 960;
    private static final int LEFT = 90;
    private static final int LANE = 44;

    private HtmlReport() {
    }

    static String render(ComparisonReport report) {
        StringBuilder html = new StringBuilder();
        html.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fenced compare</title><style>")
                .append("body{font:14px sans-serif;margin:24px;color:#222}table{border-collapse:collapse}")
                .append("td,th{border:1px solid #bbb;padding:4px 8px;text-align:left}th{background:#eee}")
                .append(".differs{color:#b00;font-weight:bold}svg{border:1px solid #ddd;margin:6px 0 18px}")
                .append("</style></head><body>\n<h1>What each mechanism guarantees, measured</h1>\n")
                .append("<p>").append(esc(report.refunds())).append(" refunds, stalled at ")
                .append(esc(report.stalledRefund())).append("; speed x").append(report.speed())
                .append("; figures are min/median/max over ").append(report.runs()).append(" run(s); times in article seconds.</p>\n")
                .append("<table><tr><th>mechanism</th><th>double refunds</th><th>stale writes accepted</th><th>lost or stuck</th>")
                .append("<th>settled (s)</th><th>blocked after crash (s)</th><th>expected</th><th>verdict</th></tr>\n");
        for (ComparisonRow row : report.rows()) {
            html.append("<tr><td>").append(esc(row.label())).append("</td><td>").append(esc(row.doubleRefunds()))
                    .append("</td><td>").append(esc(row.staleWritesAccepted())).append("</td><td>").append(esc(row.lostOrStuck()))
                    .append("</td><td>").append(esc(row.settledArticleSeconds())).append("</td><td>")
                    .append(esc(row.blockedAfterCrashArticleSeconds())).append("</td><td>").append(esc(row.expected()))
                    .append("</td><td").append(row.verdict().startsWith("DIFFERS") ? " class=\"differs\"" : "").append(">")
                    .append(esc(row.verdict())).append("</td></tr>\n");
        }
        html.append("</table>\n<h2>Timelines</h2>\n<p>Bars are leases (token inside), the grey box is the SIGSTOP pause,")
                .append(" red dots are stale writes the database accepted, red crosses are writes it refused,")
                .append(" orange triangles are refunds the gateway created twice.</p>\n");
        for (ComparisonRun run : report.results()) {
            html.append("<h3>").append(esc(run.report().label())).append(", run ").append(run.run()).append("</h3>\n");
            html.append(svg(run.report()));
        }
        return html.append("</body></html>\n").toString();
    }

    private static String svg(DemoReport run) {
        List<TimelineEntry> timeline = run.timeline();
        long end = timeline.stream().mapToLong(TimelineEntry::elapsedMs).max().orElse(1);
        double scale = (WIDTH - LEFT - 20) / (double) Math.max(1, end);
        StringBuilder svg = new StringBuilder();
        int height = LANE * 3 + 30;
        svg.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"").append(height)
                .append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(height).append("\">\n");
        String[] lanes = {"A", "B", "gateway"};
        for (int i = 0; i < lanes.length; i++) {
            int y = 10 + i * LANE;
            svg.append("<g class=\"lane\" data-lane=\"").append(lanes[i]).append("\"><line x1=\"").append(LEFT).append("\" y1=\"")
                    .append(y + LANE / 2).append("\" x2=\"").append(WIDTH - 10).append("\" y2=\"").append(y + LANE / 2)
                    .append("\" stroke=\"#ccc\"/><text x=\"8\" y=\"").append(y + LANE / 2 + 5).append("\">")
                    .append(i < 2 ? "worker " + lanes[i] : "gateway").append("</text></g>\n");
        }
        long aAcquired = at(timeline, "A", "acquired");
        long aExpired = atNote(timeline, "Redis expired A's lease");
        long bAcquired = at(timeline, "B", "acquired");
        long bReleased = at(timeline, "B", "released");
        lease(svg, 0, aAcquired, aExpired, scale, "token " + run.workerA().token(), "#7aa6d8");
        lease(svg, 1, bAcquired, bReleased, scale, "token " + run.workerB().token(), "#8cc98c");
        long paused = run.pausedAtMs();
        long resumed = run.resumedAtMs();
        svg.append("<rect class=\"pause\" x=\"").append(x(paused, scale)).append("\" y=\"12\" width=\"")
                .append(Math.max(2, (int) ((resumed - paused) * scale))).append("\" height=\"").append(LANE - 4)
                .append("\" fill=\"#999\" fill-opacity=\"0.45\"><title>SIGSTOP to SIGCONT</title></rect>\n");
        for (DemoReport.StaleWrite write : run.staleWrites()) {
            svg.append("<circle class=\"stale\" cx=\"").append(x(write.elapsedMs(), scale)).append("\" cy=\"")
                    .append(10 + LANE / 2).append("\" r=\"4\" fill=\"#d22\"><title>stale ").append(esc(write.event())).append(' ')
                    .append(esc(write.refund())).append(" accepted</title></circle>\n");
        }
        for (TimelineEntry e : timeline) {
            if ("violation".equals(e.event())) {
                int cx = x(e.elapsedMs(), scale);
                int cy = 10 + ("A".equals(e.worker()) ? 0 : LANE) + LANE / 2;
                svg.append("<path class=\"refused\" d=\"M").append(cx - 5).append(' ').append(cy - 5).append(" l10 10 m0 -10 l-10 10\"")
                        .append(" stroke=\"#d22\" stroke-width=\"2\"><title>refused: ").append(esc(e.refund())).append(' ')
                        .append(esc(e.detail())).append("</title></path>\n");
            }
        }
        for (DemoReport.DuplicateRefund dup : run.duplicateRefunds()) {
            int cx = x(dup.elapsedMs(), scale);
            int cy = 10 + 2 * LANE + LANE / 2;
            svg.append("<path class=\"duplicate\" d=\"M").append(cx).append(' ').append(cy - 6).append(" l6 11 h-12 z\" fill=\"#f90\"><title>")
                    .append(esc(dup.refund())).append(" created again as ").append(esc(dup.gatewayId())).append("</title></path>\n");
        }
        svg.append("<text x=\"").append(LEFT).append("\" y=\"").append(height - 4).append("\" font-size=\"11\">0 s</text><text x=\"")
                .append(WIDTH - 60).append("\" y=\"").append(height - 4).append("\" font-size=\"11\">")
                .append(String.format("%.1f s", end / 1000.0)).append("</text>\n");
        return svg.append("</svg>\n").toString();
    }

    private static void lease(StringBuilder svg, int lane, long from, long to, double scale, String label, String colour) {
        if (from < 0) {
            return;
        }
        long until = to < 0 ? from : to;
        int y = 10 + lane * LANE + 12;
        svg.append("<g class=\"lease\"><rect x=\"").append(x(from, scale)).append("\" y=\"").append(y).append("\" width=\"")
                .append(Math.max(2, (int) ((until - from) * scale))).append("\" height=\"").append(LANE - 24).append("\" fill=\"")
                .append(colour).append("\"/><text x=\"").append(x(from, scale) + 4).append("\" y=\"").append(y + 14)
                .append("\" font-size=\"11\">").append(esc(label)).append("</text></g>\n");
    }

    /** When the worker's first event of that name happened; -1 if it never did. */
    private static long at(List<TimelineEntry> timeline, String worker, String event) {
        return timeline.stream().filter(e -> worker.equals(e.worker()) && event.equals(e.event()))
                .mapToLong(TimelineEntry::elapsedMs).findFirst().orElse(-1);
    }

    private static long atNote(List<TimelineEntry> timeline, String prefix) {
        return timeline.stream().filter(e -> e.isNote() && e.event().startsWith(prefix))
                .mapToLong(TimelineEntry::elapsedMs).findFirst().orElse(-1);
    }

    private static int x(long elapsedMs, double scale) {
        return LEFT + (int) (elapsedMs * scale);
    }

    private static String esc(Object value) {
        return String.valueOf(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
