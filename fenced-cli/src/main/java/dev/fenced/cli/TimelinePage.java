package dev.fenced.cli;

import java.util.Collection;
import java.util.Locale;
import java.util.Map;

/**
 * The parts of a self-contained page around {@link TimelineChart}s: the page and its style, a
 * header's facts, the legend, and the escaping and number format every part uses. No scripts, no
 * external assets; every fact and legend entry names itself in a {@code data-} attribute, so a
 * browser test can read the page back. Used by {@code fenced timeline} and the lab's report.
 */
public final class TimelinePage {
    private TimelinePage() {
    }

    /** The legend of the kinds used on a page, one entry each, in {@link TimelineKind#ORDER}. */
    public static String legend(Collection<TimelineKind> kinds) {
        StringBuilder html = new StringBuilder("<ul class=\"legend\">\n");
        kinds.stream().distinct().sorted(TimelineKind.ORDER).forEach(kind -> html.append("<li class=\"legend-entry\" data-kind=\"")
                .append(kind.css()).append("\"><svg viewBox=\"0 0 24 16\" width=\"24\" height=\"16\">").append(kind.icon())
                .append("</svg> ").append(esc(kind.legend())).append("</li>\n"));
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
}
