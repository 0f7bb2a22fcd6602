package dev.fenced.lab;

import dev.fenced.cli.TimelineChart;
import dev.fenced.cli.TimelineKind;

/**
 * What the lab draws on a run's timeline beyond what {@code fenced timeline} shows an operator:
 * the pause it caused, the lease Redis expired while its worker still believed it held it, the
 * stale writes a weaker mechanism let through and the gateway's double refunds. The lab knows
 * these from its own orchestration and checks; a worker's event lines do not carry them.
 */
final class LabMarks {
    static final TimelineKind BELIEVED = TimelineKind.bar("believed",
            "lease already expired in Redis, the worker still believes it holds it", 20,
            "<rect x=\"1\" y=\"3\" width=\"22\" height=\"10\" fill=\"none\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>",
            (x, width, top, height, colour) -> "<rect x=\"" + x + "\" y=\"" + (top + height / 2 - 9) + "\" width=\"" + width
                    + "\" height=\"18\" fill=\"none\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>");
    static final TimelineKind PAUSE = TimelineKind.bar("pause", "process frozen (SIGSTOP to SIGCONT)", 30,
            "<rect x=\"1\" y=\"1\" width=\"22\" height=\"14\" fill=\"#777\" fill-opacity=\"0.35\"/>",
            (x, width, top, height, colour) -> "<rect x=\"" + x + "\" y=\"" + (top + 2) + "\" width=\"" + width + "\" height=\""
                    + (height - 4) + "\" fill=\"#777\" fill-opacity=\"0.35\"/>");
    static final TimelineKind STALE = TimelineKind.mark("stale", "stale write the database accepted (another worker held the lease)",
            "stale write accepted", "stale writes accepted", 50, "<circle cx=\"12\" cy=\"8\" r=\"4\" fill=\"#d22\"/>", true,
            (x, mid) -> new TimelineKind.Shape("circle", "cx=\"" + x + "\" cy=\"" + (mid + 13) + "\" r=\"3.5\" fill=\"#d22\""));
    static final TimelineKind DUPLICATE = TimelineKind.mark("duplicate", "refund the gateway created again (a double refund)",
            "double refund", "double refunds", 70, "<path d=\"M12 2 l7 12 h-14 z\" fill=\"#f80\"/>", true,
            (x, mid) -> new TimelineKind.Shape("path", "d=\"M" + x + ' ' + (mid - 7) + " l7 12 h-14 z\" fill=\"#f80\""));

    private LabMarks() {
    }

    /** Redis expired the lane's lease at {@code at}: the bar ends there and what the worker still believed follows it, dashed. */
    static TimelineChart.Builder leaseExpired(TimelineChart.Builder chart, String lane, double at) {
        return chart.split(lane, TimelineKind.LEASE, at, BELIEVED);
    }
}
