package dev.fenced.cli;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A run drawn as inline SVG: one lane per worker, its leases as bars with the token inside, its
 * writes, refusals and gateway troubles as marks, and beside each lane the count of every kind of
 * mark it holds. Charts of one page share a time axis ({@link #axisEnd}), so runs can be compared.
 * Used by {@code compare --html} and {@code fenced timeline}. Self-contained: no scripts, no
 * external assets; every mark, tick, count and legend entry names its kind in a class or a
 * {@code data-} attribute, so a browser test can read the page back.
 */
public final class TimelineChart {
    private static final int WIDTH = 960;
    private static final int LEFT = 120;
    private static final int COUNTS = 230;
    private static final int TOP = 6;
    private static final int AXIS = 30;
    private static final int COUNT_LINE = 14;
    private static final String[] LEASE_COLOURS = {"#7aa6d8", "#8cc98c", "#c9a0dc", "#e0b070", "#80c8c8", "#d8a0a0"};

    /** What a bar or mark stands for; its class name, legend text and the words of its count. */
    public enum Kind {
        LEASE("lease", "lease held (token inside)", null, null),
        BELIEVED("believed", "lease already expired in Redis, the worker still believes it holds it", null, null),
        PAUSE("pause", "process frozen (SIGSTOP to SIGCONT)", null, null),
        WRITE("write", "claim or confirm the database accepted", "write accepted", "writes accepted"),
        STALE("stale", "stale write the database accepted (another worker held the lease)", "stale write accepted", "stale writes accepted"),
        REFUSED("refused", "write the database refused (fence violation)", "write refused", "writes refused"),
        DUPLICATE("duplicate", "refund the gateway created again (a double refund)", "double refund", "double refunds"),
        DOUBT("doubt", "gateway down or answer in doubt: row left for a lookup", "left in doubt", "left in doubt"),
        FAILED("failed", "refund definitively refused by the gateway", "refused by the gateway", "refused by the gateway"),
        JOB("job", "job delivery: received, acked, retried, handed back", "job event", "job events");

        private final String css;
        private final String legend;
        private final String one;
        private final String many;
        private final boolean span;

        Kind(String css, String legend, String one, String many) {
            this.css = css;
            this.legend = legend;
            this.one = one;
            this.many = many;
            this.span = one == null;
        }

        public String css() {
            return css;
        }

        /** A count of marks of this kind in words, e.g. "771 stale writes accepted". */
        public String count(long count) {
            return String.format(Locale.ROOT, "%,d %s", count, count == 1 ? one : many);
        }
    }

    /** One line of a run: a worker's event, at milliseconds since the run began. */
    public record Entry(long elapsedMs, String lane, String event, String refund, long token, String detail) {
    }

    /** A bar from one time to another (in the chart's unit). */
    public record Span(String lane, Kind kind, double from, double to, String label) {
    }

    /** A mark at one time (in the chart's unit). */
    public record Mark(String lane, Kind kind, double at, String refund, String title) {
    }

    private final Map<String, String> attributes;
    private final Map<String, String> lanes;
    private final List<Span> spans;
    private final List<Mark> marks;
    private final String title;
    /** Marks counted by lane and kind, once: a fleet's run has many thousands. */
    private final Map<String, Map<Kind, Long>> countsByLane = new LinkedHashMap<>();

    private TimelineChart(Builder b) {
        this.title = b.title;
        this.attributes = Map.copyOf(b.attributes);
        this.lanes = new LinkedHashMap<>(b.lanes);
        this.spans = List.copyOf(b.spans);
        this.marks = List.copyOf(b.marks);
        for (Mark mark : marks) {
            countsByLane.computeIfAbsent(mark.lane(), lane -> new EnumMap<>(Kind.class)).merge(mark.kind(), 1L, Long::sum);
        }
    }

    public static Builder builder(String title) {
        return new Builder(title);
    }

    /** The latest time drawn. */
    public double end() {
        double end = 0;
        for (Span span : spans) {
            end = Math.max(end, span.to());
        }
        for (Mark mark : marks) {
            end = Math.max(end, mark.at());
        }
        return end;
    }

    public Set<Kind> kinds() {
        Set<Kind> kinds = EnumSet.noneOf(Kind.class);
        spans.forEach(span -> kinds.add(span.kind()));
        marks.forEach(mark -> kinds.add(mark.kind()));
        return kinds;
    }

    /** How many marks of that kind the lane holds. */
    public long count(String lane, Kind kind) {
        return countsByLane.getOrDefault(lane, Map.of()).getOrDefault(kind, 0L);
    }

    /** A figure: caption, then the SVG on an axis from 0 to {@code axisEnd} (a value of {@link #axisEnd}). */
    public String figure(double axisEnd, String unit, String caption) {
        StringBuilder html = new StringBuilder("<figure class=\"run\"");
        attributes.forEach((name, value) -> html.append(" data-").append(name).append("=\"").append(esc(value)).append('"'));
        html.append("><figcaption>").append(esc(caption)).append("</figcaption>\n<div class=\"scroll\">");
        return html.append(svg(axisEnd, unit)).append("</div></figure>\n").toString();
    }

    private String svg(double axisEnd, String unit) {
        Map<String, Integer> laneTop = new LinkedHashMap<>();
        Map<String, Integer> laneHeight = new LinkedHashMap<>();
        int y = TOP;
        for (String lane : lanes.keySet()) {
            int lines = countsByLane.getOrDefault(lane, Map.of()).size();
            int height = Math.max(40, lines * COUNT_LINE + 12);
            laneTop.put(lane, y);
            laneHeight.put(lane, height);
            y += height;
        }
        int lanesBottom = y;
        int height = lanesBottom + AXIS;
        double scale = (WIDTH - LEFT - COUNTS) / Math.max(axisEnd, 1e-9);
        StringBuilder svg = new StringBuilder();
        svg.append("<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(height)
                .append("\" role=\"img\" aria-label=\"").append(esc(title)).append("\">\n");
        int band = 0;
        for (Map.Entry<String, String> lane : lanes.entrySet()) {
            int top = laneTop.get(lane.getKey());
            int h = laneHeight.get(lane.getKey());
            svg.append("<g class=\"lane\" data-lane=\"").append(esc(lane.getKey())).append("\"><rect x=\"0\" y=\"").append(top)
                    .append("\" width=\"").append(WIDTH - COUNTS).append("\" height=\"").append(h).append("\" fill=\"")
                    .append(band++ % 2 == 0 ? "#f7f7f7" : "#ffffff").append("\"/><text x=\"8\" y=\"").append(top + h / 2 + 4)
                    .append("\" font-size=\"13\">").append(esc(lane.getValue())).append("</text></g>\n");
        }
        for (double tick : ticks(axisEnd)) {
            int x = x(tick, scale);
            svg.append("<g class=\"tick\" data-seconds=\"").append(number(tick)).append("\"><line x1=\"").append(x).append("\" y1=\"")
                    .append(TOP).append("\" x2=\"").append(x).append("\" y2=\"").append(lanesBottom + 4)
                    .append("\" stroke=\"#ddd\"/><text x=\"").append(x).append("\" y=\"").append(lanesBottom + 18)
                    .append("\" font-size=\"11\" text-anchor=\"middle\">").append(number(tick)).append(" s</text></g>\n");
        }
        svg.append("<text class=\"axis-unit\" x=\"8\" y=\"").append(lanesBottom + 18).append("\" font-size=\"11\">")
                .append(esc(unit)).append("</text>\n");
        List<String> laneOrder = new ArrayList<>(lanes.keySet()); // a lane's lease colour follows its place, not its first bar
        for (Span span : spans) {
            Integer top = laneTop.get(span.lane());
            int h = laneHeight.get(span.lane());
            int x = x(span.from(), scale);
            int width = Math.max(2, (int) Math.round((span.to() - span.from()) * scale));
            svg.append("<g class=\"").append(span.kind().css).append("\">");
            switch (span.kind()) {
                case PAUSE -> svg.append("<rect x=\"").append(x).append("\" y=\"").append(top + 2).append("\" width=\"").append(width)
                        .append("\" height=\"").append(h - 4).append("\" fill=\"#777\" fill-opacity=\"0.35\"/>");
                case BELIEVED -> svg.append("<rect x=\"").append(x).append("\" y=\"").append(top + h / 2 - 9).append("\" width=\"")
                        .append(width).append("\" height=\"18\" fill=\"none\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>");
                default -> {
                    String colour = LEASE_COLOURS[laneOrder.indexOf(span.lane()) % LEASE_COLOURS.length];
                    svg.append("<rect x=\"").append(x).append("\" y=\"").append(top + h / 2 - 9).append("\" width=\"").append(width)
                            .append("\" height=\"18\" fill=\"").append(colour).append("\"/>");
                }
            }
            svg.append("<title>").append(esc(span.kind().legend)).append(span.label() == null ? "" : ": " + esc(span.label()))
                    .append("</title>");
            if (span.label() != null && span.kind() != Kind.PAUSE) {
                svg.append("<text x=\"").append(x + 4).append("\" y=\"").append(top + h / 2 + 4).append("\" font-size=\"11\">")
                        .append(esc(span.label())).append("</text>");
            }
            svg.append("</g>\n");
        }
        for (Mark mark : marks) {
            int cx = x(mark.at(), scale);
            int mid = laneTop.get(mark.lane()) + laneHeight.get(mark.lane()) / 2;
            String[] shape = switch (mark.kind()) {
                case WRITE -> new String[] {"rect", "x=\"" + cx + "\" y=\"" + (mid + 10) + "\" width=\"1\" height=\"7\" fill=\"#666\""};
                case STALE -> new String[] {"circle", "cx=\"" + cx + "\" cy=\"" + (mid + 13) + "\" r=\"3.5\" fill=\"#d22\""};
                case REFUSED -> new String[] {"path", "d=\"M" + (cx - 5) + ' ' + (mid - 5) + " l10 10 m0 -10 l-10 10\" stroke=\"#d22\""
                        + " stroke-width=\"2.5\""};
                case DUPLICATE -> new String[] {"path", "d=\"M" + cx + ' ' + (mid - 7) + " l7 12 h-14 z\" fill=\"#f80\""};
                case DOUBT -> new String[] {"path", "d=\"M" + cx + ' ' + (mid - 16) + " l5 5 l-5 5 l-5 -5 z\" fill=\"#93c\""};
                case FAILED -> new String[] {"rect", "x=\"" + (cx - 4) + "\" y=\"" + (mid - 16) + "\" width=\"8\" height=\"8\" fill=\"#333\""};
                case JOB -> new String[] {"circle", "cx=\"" + cx + "\" cy=\"" + (mid - 13) + "\" r=\"3\" fill=\"#27c\""};
                default -> throw new IllegalStateException("not a mark: " + mark.kind());
            };
            svg.append('<').append(shape[0]).append(" class=\"").append(mark.kind().css).append("\" ").append(shape[1]);
            if (mark.title() == null) {
                svg.append("/>\n"); // writes come by the thousand: no tooltip each
            } else {
                svg.append("><title>").append(esc(mark.title())).append("</title></").append(shape[0]).append(">\n");
            }
        }
        for (String lane : lanes.keySet()) {
            int line = 0;
            int top = laneTop.get(lane);
            for (Kind kind : Kind.values()) {
                long count = count(lane, kind);
                if (kind.span || count == 0) {
                    continue;
                }
                svg.append("<text class=\"count\" data-lane=\"").append(esc(lane)).append("\" data-kind=\"").append(kind.css)
                        .append("\" data-count=\"").append(count).append("\" x=\"").append(WIDTH - COUNTS + 10).append("\" y=\"")
                        .append(top + 17 + line++ * COUNT_LINE).append("\" font-size=\"12\"")
                        .append(kind == Kind.STALE || kind == Kind.DUPLICATE || kind == Kind.REFUSED ? " font-weight=\"bold\"" : "")
                        .append('>').append(kind.count(count)).append("</text>\n");
            }
        }
        return svg.append("</svg>").toString();
    }

    private static int x(double at, double scale) {
        return LEFT + (int) Math.round(at * scale);
    }

    /** Where the ticks of an axis reaching at least {@code end} fall: 0, a round step, at most 12 of them; the last is the axis's end. */
    public static List<Double> ticks(double end) {
        double[] steps = {0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400};
        double step = steps[steps.length - 1];
        for (double candidate : steps) {
            if (Math.ceil(end / candidate - 1e-9) <= 10) {
                step = candidate;
                break;
            }
        }
        int count = Math.max(1, (int) Math.ceil(end / step - 1e-9));
        List<Double> ticks = new ArrayList<>();
        for (int i = 0; i <= count; i++) {
            ticks.add(Math.round(i * step * 10) / 10.0);
        }
        return ticks;
    }

    /** The end of one axis shared by charts: the last tick past the latest of their ends. */
    public static double axisEnd(List<TimelineChart> charts) {
        List<Double> ticks = ticks(charts.stream().mapToDouble(TimelineChart::end).max().orElse(1));
        return ticks.get(ticks.size() - 1);
    }

    /** The legend of the kinds used on a page, one entry each. */
    public static String legend(Set<Kind> kinds) {
        StringBuilder html = new StringBuilder("<ul class=\"legend\">\n");
        for (Kind kind : kinds) {
            html.append("<li class=\"legend-entry\" data-kind=\"").append(kind.css).append("\"><svg viewBox=\"0 0 24 16\" width=\"24\" height=\"16\">")
                    .append(switch (kind) {
                        case LEASE -> "<rect x=\"1\" y=\"3\" width=\"22\" height=\"10\" fill=\"#7aa6d8\"/>";
                        case BELIEVED -> "<rect x=\"1\" y=\"3\" width=\"22\" height=\"10\" fill=\"none\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>";
                        case PAUSE -> "<rect x=\"1\" y=\"1\" width=\"22\" height=\"14\" fill=\"#777\" fill-opacity=\"0.35\"/>";
                        case WRITE -> "<rect x=\"11\" y=\"4\" width=\"1.5\" height=\"8\" fill=\"#666\"/>";
                        case STALE -> "<circle cx=\"12\" cy=\"8\" r=\"4\" fill=\"#d22\"/>";
                        case REFUSED -> "<path d=\"M7 3 l10 10 m0 -10 l-10 10\" stroke=\"#d22\" stroke-width=\"2.5\"/>";
                        case DUPLICATE -> "<path d=\"M12 2 l7 12 h-14 z\" fill=\"#f80\"/>";
                        case DOUBT -> "<path d=\"M12 3 l5 5 l-5 5 l-5 -5 z\" fill=\"#93c\"/>";
                        case FAILED -> "<rect x=\"8\" y=\"4\" width=\"8\" height=\"8\" fill=\"#333\"/>";
                        case JOB -> "<circle cx=\"12\" cy=\"8\" r=\"3.5\" fill=\"#27c\"/>";
                    }).append("</svg> ").append(esc(kind.legend)).append("</li>\n");
        }
        return html.append("</ul>\n").toString();
    }

    /** A whole self-contained page: the style, then the body's HTML. */
    public static String page(String title, String body) {
        return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>" + esc(title) + "</title><style>"
                + css() + "</style></head><body>\n" + body + "</body></html>\n";
    }

    /** A header's list of facts: name, then value; each value names itself in {@code data-meta}. */
    public static String metadata(Map<String, String> facts) {
        StringBuilder dl = new StringBuilder("<dl class=\"meta\">");
        facts.forEach((name, value) -> dl.append("<dt>").append(esc(name)).append("</dt><dd data-meta=\"").append(esc(name)).append("\">")
                .append(esc(value)).append("</dd>"));
        return dl.append("</dl>\n").toString();
    }

    /** The page's style: readable on a phone (figures scroll sideways, never shrink to nothing) and printed. */
    static String css() {
        return "body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:1000px;padding:0 12px;color:#222}"
                + "h1{font-size:22px}h2{font-size:18px;margin-top:28px}table{border-collapse:collapse}"
                + "td,th{border:1px solid #bbb;padding:4px 8px;text-align:left;vertical-align:top}th{background:#eee}"
                + ".differs{color:#b00;font-weight:bold}.scroll{overflow-x:auto}"
                + "svg.timeline,svg.outage{display:block;width:100%;min-width:640px;height:auto}"
                + "figure{margin:8px 0 22px}figcaption{font-weight:600;margin-bottom:4px}"
                + ".meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}.meta dt{color:#666}.meta dd{margin:0}"
                + ".legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:4px 18px}"
                + ".legend-entry{display:flex;align-items:center;gap:6px}"
                + "@media (max-width:700px){body{margin:8px auto;font-size:13px}td,th{padding:3px 5px}}"
                + "@media print{body{max-width:none;margin:0}.scroll{overflow:visible}svg.timeline,svg.outage{min-width:0}"
                + "figure,tr{break-inside:avoid}}";
    }

    /** A figure in the chart's unit, without a trailing ".0". */
    public static String number(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : String.format(Locale.ROOT, "%.1f", value);
    }

    public static String esc(Object value) {
        return String.valueOf(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    /** Collects lanes, bars and marks; {@link #entries} turns a worker's event lines into them. */
    public static final class Builder {
        private final String title;
        private final Map<String, String> attributes = new LinkedHashMap<>();
        private final Map<String, String> lanes = new LinkedHashMap<>();
        private final List<Span> spans = new ArrayList<>();
        private final List<Mark> marks = new ArrayList<>();

        private Builder(String title) {
            this.title = title;
        }

        /** A {@code data-} attribute of the figure, e.g. the mechanism a run measured. */
        public Builder attribute(String name, String value) {
            attributes.put(name, value);
            return this;
        }

        /** A lane, in the order lanes are added; adding one again keeps its place and changes its label. */
        public Builder lane(String key, String label) {
            lanes.put(key, label);
            return this;
        }

        public Builder span(String lane, Kind kind, double from, double to, String label) {
            lanes.putIfAbsent(lane, lane);
            spans.add(new Span(lane, kind, from, Math.max(from, to), label));
            return this;
        }

        public Builder mark(String lane, Kind kind, double at, String refund, String title) {
            lanes.putIfAbsent(lane, lane);
            marks.add(new Mark(lane, kind, at, refund, title));
            return this;
        }

        /**
         * A run's event lines: a lease from {@code acquired} to {@code released}, {@code lease-lost},
         * {@code outcome} or {@code result} (or the last line), claims and confirms, refusals, gateway
         * troubles and job deliveries. {@code unitsPerMs} converts to the chart's unit.
         */
        public Builder entries(List<Entry> entries, double unitsPerMs) {
            List<Entry> sorted = entries.stream().sorted(Comparator.comparingLong(Entry::elapsedMs)).toList();
            Map<String, Entry> open = new LinkedHashMap<>();
            double last = 0;
            for (Entry e : sorted) {
                double at = e.elapsedMs() * unitsPerMs;
                last = Math.max(last, at);
                lanes.putIfAbsent(e.lane(), e.lane());
                String what = e.refund() == null ? e.event() : e.event() + " " + e.refund();
                switch (e.event()) {
                    case "acquired" -> open.putIfAbsent(e.lane(), e);
                    case "released", "lease-lost", "outcome", "result" -> {
                        Entry acquired = open.remove(e.lane());
                        if (acquired != null) {
                            span(e.lane(), Kind.LEASE, acquired.elapsedMs() * unitsPerMs, at, "token " + acquired.token());
                        }
                    }
                    case "claimed", "confirmed" -> mark(e.lane(), Kind.WRITE, at, e.refund(), null);
                    case "violation" -> mark(e.lane(), Kind.REFUSED, at, e.refund(), "refused: " + what + detail(e));
                    case "gateway-down", "left" -> mark(e.lane(), Kind.DOUBT, at, e.refund(), what + detail(e));
                    case "failed" -> mark(e.lane(), Kind.FAILED, at, e.refund(), what + detail(e));
                    default -> {
                        if (e.event().startsWith("job-")) {
                            mark(e.lane(), Kind.JOB, at, null, e.event() + detail(e));
                        }
                    }
                }
            }
            for (Entry acquired : open.values()) {
                span(acquired.lane(), Kind.LEASE, acquired.elapsedMs() * unitsPerMs, last, "token " + acquired.token());
            }
            return this;
        }

        private static String detail(Entry e) {
            return e.detail() == null ? "" : " (" + e.detail() + ")";
        }

        /** Redis expired the lane's lease at {@code at}: the bar ends there and what the worker still believed follows it, dashed. */
        public Builder leaseExpired(String lane, double at) {
            for (int i = 0; i < spans.size(); i++) {
                Span span = spans.get(i);
                if (span.lane().equals(lane) && span.kind() == Kind.LEASE && span.from() <= at && at < span.to()) {
                    spans.set(i, new Span(lane, Kind.LEASE, span.from(), at, span.label()));
                    spans.add(new Span(lane, Kind.BELIEVED, at, span.to(), null));
                    return this;
                }
            }
            return this;
        }

        public TimelineChart build() {
            return new TimelineChart(this);
        }
    }

    /** Every kind used by these charts, in legend order. */
    public static Set<Kind> kinds(List<TimelineChart> charts) {
        Set<Kind> kinds = EnumSet.noneOf(Kind.class);
        charts.forEach(chart -> kinds.addAll(chart.kinds()));
        return kinds;
    }

    /** Counts by kind over the whole chart, for captions. */
    public Map<Kind, Long> counts() {
        Map<Kind, Long> counts = new EnumMap<>(Kind.class);
        countsByLane.values().forEach(lane -> lane.forEach((kind, count) -> counts.merge(kind, count, Long::sum)));
        return counts;
    }
}
