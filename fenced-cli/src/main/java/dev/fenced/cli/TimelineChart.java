package dev.fenced.cli;

import static dev.fenced.cli.TimelinePage.esc;
import static dev.fenced.cli.TimelinePage.number;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A run drawn as inline SVG: one lane per worker, its leases as bars with the token inside, its
 * writes, refusals and gateway troubles as marks, and beside each lane the count of every kind of
 * mark it holds. Charts of one page share a time axis ({@link #axisEnd}), so runs can be compared.
 * Used by {@code fenced timeline} and, with kinds of its own ({@link TimelineKind}), the lab's
 * {@code compare --html}; the page around it is {@link TimelinePage}. Self-contained: no scripts,
 * no external assets; every mark, tick and count names its kind in a class or a {@code data-}
 * attribute, so a browser test can read the page back. Immutable once built; it draws only what it
 * was given, and does not check that marks and bars agree with each other.
 */
public final class TimelineChart {
    private static final int WIDTH = 960;
    private static final int LEFT = 120;
    private static final int COUNTS = 230;
    private static final int TOP = 6;
    private static final int AXIS = 30;
    private static final int COUNT_LINE = 14;
    private static final String[] LEASE_COLOURS = {"#7aa6d8", "#8cc98c", "#c9a0dc", "#e0b070", "#80c8c8", "#d8a0a0"};

    /** One line of a run: a worker's event, at milliseconds since the run began. */
    public record Entry(long elapsedMs, String lane, String event, String refund, long token, String detail) {
    }

    /** A bar from one time to another (in the chart's unit). */
    public record Span(String lane, TimelineKind kind, double from, double to, String label) {
    }

    /** A mark at one time (in the chart's unit). */
    public record Mark(String lane, TimelineKind kind, double at, String refund, String title) {
    }

    private final Map<String, String> attributes;
    private final Map<String, String> lanes;
    private final List<Span> spans;
    private final List<Mark> marks;
    private final String title;
    /** Marks counted by lane and kind, once: a fleet's run has many thousands. */
    private final Map<String, Map<TimelineKind, Long>> countsByLane = new LinkedHashMap<>();

    private TimelineChart(Builder b) {
        this.title = b.title;
        this.attributes = Map.copyOf(b.attributes);
        this.lanes = new LinkedHashMap<>(b.lanes);
        this.spans = List.copyOf(b.spans);
        this.marks = List.copyOf(b.marks);
        for (Mark mark : marks) {
            countsByLane.computeIfAbsent(mark.lane(), lane -> new TreeMap<>(TimelineKind.ORDER)).merge(mark.kind(), 1L, Long::sum);
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

    /** The kinds drawn, in {@link TimelineKind#ORDER}. */
    public Set<TimelineKind> kinds() {
        Set<TimelineKind> kinds = new TreeSet<>(TimelineKind.ORDER);
        spans.forEach(span -> kinds.add(span.kind()));
        marks.forEach(mark -> kinds.add(mark.kind()));
        return kinds;
    }

    /** How many marks of that kind the lane holds. */
    public long count(String lane, TimelineKind kind) {
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
            String colour = LEASE_COLOURS[laneOrder.indexOf(span.lane()) % LEASE_COLOURS.length];
            svg.append("<g class=\"").append(span.kind().css()).append("\">").append(span.kind().drawBar(x, width, top, h, colour));
            svg.append("<title>").append(esc(span.kind().legend())).append(span.label() == null ? "" : ": " + esc(span.label()))
                    .append("</title>");
            if (span.label() != null) {
                svg.append("<text x=\"").append(x + 4).append("\" y=\"").append(top + h / 2 + 4).append("\" font-size=\"11\">")
                        .append(esc(span.label())).append("</text>");
            }
            svg.append("</g>\n");
        }
        for (Mark mark : marks) {
            int cx = x(mark.at(), scale);
            int mid = laneTop.get(mark.lane()) + laneHeight.get(mark.lane()) / 2;
            TimelineKind.Shape shape = mark.kind().drawMark(cx, mid);
            svg.append('<').append(shape.element()).append(" class=\"").append(mark.kind().css()).append("\" ").append(shape.attributes());
            if (mark.title() == null) {
                svg.append("/>\n"); // writes come by the thousand: no tooltip each
            } else {
                svg.append("><title>").append(esc(mark.title())).append("</title></").append(shape.element()).append(">\n");
            }
        }
        for (String lane : lanes.keySet()) {
            int line = 0;
            int top = laneTop.get(lane);
            for (Map.Entry<TimelineKind, Long> counted : countsByLane.getOrDefault(lane, Map.of()).entrySet()) {
                TimelineKind kind = counted.getKey();
                long count = counted.getValue();
                svg.append("<text class=\"count\" data-lane=\"").append(esc(lane)).append("\" data-kind=\"").append(kind.css())
                        .append("\" data-count=\"").append(count).append("\" x=\"").append(WIDTH - COUNTS + 10).append("\" y=\"")
                        .append(top + 17 + line++ * COUNT_LINE).append("\" font-size=\"12\"")
                        .append(kind.emphasised() ? " font-weight=\"bold\"" : "")
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

        /** A bar of a {@link TimelineKind#isBar bar kind}, labelled when {@code label} is not null. */
        public Builder span(String lane, TimelineKind kind, double from, double to, String label) {
            if (!kind.isBar()) {
                throw new IllegalArgumentException("not a bar: " + kind);
            }
            lanes.putIfAbsent(lane, lane);
            spans.add(new Span(lane, kind, from, Math.max(from, to), label));
            return this;
        }

        /** A mark of a kind that is not a bar, with a tooltip when {@code title} is not null. */
        public Builder mark(String lane, TimelineKind kind, double at, String refund, String title) {
            if (kind.isBar()) {
                throw new IllegalArgumentException("not a mark: " + kind);
            }
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
                            span(e.lane(), TimelineKind.LEASE, acquired.elapsedMs() * unitsPerMs, at, "token " + acquired.token());
                        }
                    }
                    case "claimed", "confirmed" -> mark(e.lane(), TimelineKind.WRITE, at, e.refund(), null);
                    case "violation" -> mark(e.lane(), TimelineKind.REFUSED, at, e.refund(), "refused: " + what + detail(e));
                    case "gateway-down", "left" -> mark(e.lane(), TimelineKind.DOUBT, at, e.refund(), what + detail(e));
                    case "failed" -> mark(e.lane(), TimelineKind.FAILED, at, e.refund(), what + detail(e));
                    default -> {
                        if (e.event().startsWith("job-")) {
                            mark(e.lane(), TimelineKind.JOB, at, null, e.event() + detail(e));
                        }
                    }
                }
            }
            for (Entry acquired : open.values()) {
                span(acquired.lane(), TimelineKind.LEASE, acquired.elapsedMs() * unitsPerMs, last, "token " + acquired.token());
            }
            return this;
        }

        private static String detail(Entry e) {
            return e.detail() == null ? "" : " (" + e.detail() + ")";
        }

        /**
         * Splits the lane's bar of {@code kind} that covers {@code at}: it ends there, and the rest of
         * it becomes an unlabelled bar of {@code rest} (the lab's lease that Redis expired while its
         * worker still believed it held it). Nothing changes when no such bar covers {@code at}.
         */
        public Builder split(String lane, TimelineKind kind, double at, TimelineKind rest) {
            if (!rest.isBar()) {
                throw new IllegalArgumentException("not a bar: " + rest);
            }
            for (int i = 0; i < spans.size(); i++) {
                Span span = spans.get(i);
                if (span.lane().equals(lane) && span.kind() == kind && span.from() <= at && at < span.to()) {
                    spans.set(i, new Span(lane, kind, span.from(), at, span.label()));
                    spans.add(new Span(lane, rest, at, span.to(), null));
                    return this;
                }
            }
            return this;
        }

        public TimelineChart build() {
            return new TimelineChart(this);
        }
    }

    /** Every kind used by these charts, in {@link TimelineKind#ORDER}. */
    public static Set<TimelineKind> kinds(List<TimelineChart> charts) {
        Set<TimelineKind> kinds = new TreeSet<>(TimelineKind.ORDER);
        charts.forEach(chart -> kinds.addAll(chart.kinds()));
        return kinds;
    }

    /** Counts by kind over the whole chart, in {@link TimelineKind#ORDER}, for captions. */
    public Map<TimelineKind, Long> counts() {
        Map<TimelineKind, Long> counts = new TreeMap<>(TimelineKind.ORDER);
        countsByLane.values().forEach(lane -> lane.forEach((kind, count) -> counts.merge(kind, count, Long::sum)));
        return counts;
    }
}
