package dev.fenced.cli;

import java.util.Comparator;
import java.util.Locale;

/**
 * What a bar or a mark of a {@link TimelineChart} stands for: the class name a browser test reads,
 * the legend's words and icon, how it is drawn, and, for a mark, the words of its count. The
 * operator's kinds are here ({@code fenced timeline} draws them from event lines); a page of
 * another module (the lab's report) adds kinds of its own, placed among these by {@link #order}.
 * Immutable; a kind is compared by identity.
 */
public final class TimelineKind {
    /** Legend and count order. */
    public static final Comparator<TimelineKind> ORDER = Comparator.comparingInt(TimelineKind::order).thenComparing(TimelineKind::css);

    /** A bar of a lane: {@code x}, {@code width} in the chart's pixels; the lane's top and height; the lane's lease colour. */
    @FunctionalInterface
    public interface BarShape {
        String draw(int x, int width, int laneTop, int laneHeight, String laneColour);
    }

    /** A mark at {@code x}, on a lane whose middle is {@code middle}: an SVG element and its attributes. */
    @FunctionalInterface
    public interface MarkShape {
        Shape draw(int x, int middle);
    }

    /** An SVG element's name and attributes, e.g. {@code circle} and {@code cx="3" cy="4" r="2"}. */
    public record Shape(String element, String attributes) {
    }

    public static final TimelineKind LEASE = bar("lease", "lease held (token inside)", 10,
            "<rect x=\"1\" y=\"3\" width=\"22\" height=\"10\" fill=\"#7aa6d8\"/>",
            (x, width, top, height, colour) -> "<rect x=\"" + x + "\" y=\"" + (top + height / 2 - 9) + "\" width=\"" + width
                    + "\" height=\"18\" fill=\"" + colour + "\"/>");
    public static final TimelineKind WRITE = mark("write", "claim or confirm the database accepted", "write accepted", "writes accepted",
            40, "<rect x=\"11\" y=\"4\" width=\"1.5\" height=\"8\" fill=\"#666\"/>", false,
            (x, mid) -> new Shape("rect", "x=\"" + x + "\" y=\"" + (mid + 10) + "\" width=\"1\" height=\"7\" fill=\"#666\""));
    public static final TimelineKind REFUSED = mark("refused", "write the database refused (fence violation)", "write refused",
            "writes refused", 60, "<path d=\"M7 3 l10 10 m0 -10 l-10 10\" stroke=\"#d22\" stroke-width=\"2.5\"/>", true,
            (x, mid) -> new Shape("path", "d=\"M" + (x - 5) + ' ' + (mid - 5) + " l10 10 m0 -10 l-10 10\" stroke=\"#d22\" stroke-width=\"2.5\""));
    public static final TimelineKind DOUBT = mark("doubt", "gateway down or answer in doubt: row left for a lookup", "left in doubt",
            "left in doubt", 80, "<path d=\"M12 3 l5 5 l-5 5 l-5 -5 z\" fill=\"#93c\"/>", false,
            (x, mid) -> new Shape("path", "d=\"M" + x + ' ' + (mid - 16) + " l5 5 l-5 5 l-5 -5 z\" fill=\"#93c\""));
    public static final TimelineKind FAILED = mark("failed", "refund definitively refused by the gateway", "refused by the gateway",
            "refused by the gateway", 90, "<rect x=\"8\" y=\"4\" width=\"8\" height=\"8\" fill=\"#333\"/>", false,
            (x, mid) -> new Shape("rect", "x=\"" + (x - 4) + "\" y=\"" + (mid - 16) + "\" width=\"8\" height=\"8\" fill=\"#333\""));
    public static final TimelineKind JOB = mark("job", "job delivery: received, acked, retried, handed back", "job event", "job events",
            100, "<circle cx=\"12\" cy=\"8\" r=\"3.5\" fill=\"#27c\"/>", false,
            (x, mid) -> new Shape("circle", "cx=\"" + x + "\" cy=\"" + (mid - 13) + "\" r=\"3\" fill=\"#27c\""));

    private final String css;
    private final String legend;
    private final String one;
    private final String many;
    private final int order;
    private final String icon;
    private final boolean emphasised;
    private final BarShape bar;
    private final MarkShape mark;

    private TimelineKind(String css, String legend, String one, String many, int order, String icon, boolean emphasised, BarShape bar,
                         MarkShape mark) {
        this.css = css;
        this.legend = legend;
        this.one = one;
        this.many = many;
        this.order = order;
        this.icon = icon;
        this.emphasised = emphasised;
        this.bar = bar;
        this.mark = mark;
    }

    /** A kind drawn as a bar from one time to another; bars are not counted. {@code icon} is the legend's SVG, 24 by 16. */
    public static TimelineKind bar(String css, String legend, int order, String icon, BarShape shape) {
        return new TimelineKind(css, legend, null, null, order, icon, false, shape, null);
    }

    /** A kind drawn as a mark at one time and counted beside its lane ("1 write refused", "2 writes refused"), in bold when emphasised. */
    public static TimelineKind mark(String css, String legend, String one, String many, int order, String icon, boolean emphasised,
                                    MarkShape shape) {
        return new TimelineKind(css, legend, one, many, order, icon, emphasised, null, shape);
    }

    public String css() {
        return css;
    }

    public String legend() {
        return legend;
    }

    /** Where the kind stands in a legend and among a lane's counts: lower first. */
    public int order() {
        return order;
    }

    public boolean isBar() {
        return bar != null;
    }

    /** A count of marks of this kind in words, e.g. "771 stale writes accepted". */
    public String count(long count) {
        return String.format(Locale.ROOT, "%,d %s", count, count == 1 ? one : many);
    }

    String icon() {
        return icon;
    }

    boolean emphasised() {
        return emphasised;
    }

    String drawBar(int x, int width, int laneTop, int laneHeight, String laneColour) {
        return bar.draw(x, width, laneTop, laneHeight, laneColour);
    }

    Shape drawMark(int x, int middle) {
        return mark.draw(x, middle);
    }

    @Override
    public String toString() {
        return css;
    }
}
