package dev.fenced.cli;

import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "timeline", mixinStandardHelpOptions = true,
        description = {"Draw the event lines of a real run as a self-contained HTML timeline.",
                "It reads the output of settle --events or worker --events: one lane per worker (and merchant, when there are"
                        + " several), its leases with their tokens, its writes, the writes the database refused, gateway troubles"
                        + " and job deliveries, on one axis in seconds."})
final class TimelineCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "EVENTS", description = "a file of event lines, one JSON object per line; - reads stdin")
    String events;

    @Option(names = "--html", required = true, paramLabel = "FILE", description = "the page to write")
    Path html;

    @Option(names = "--title", description = "the page's title (default: the events file's name)")
    String title;

    @Override
    public Integer call() throws IOException {
        List<String> lines = read();
        List<EventLine> parsed = lines.stream().map(EventCodec::read).flatMap(Optional::stream)
                .filter(line -> !(line instanceof EventLine.Ready)).toList();
        if (parsed.isEmpty()) {
            throw new UsageException("no event lines in " + events + "; give the output of settle --events or worker --events");
        }
        for (EventLine line : parsed) {
            if (line.worker() == null || line.at() <= 0) {
                throw new UsageException("an event line in " + events + " has no worker or no time (\"worker\", \"at\"): "
                        + EventCodec.write(line));
            }
        }
        long first = parsed.stream().mapToLong(EventLine::at).min().orElseThrow();
        long last = parsed.stream().mapToLong(EventLine::at).max().orElseThrow();
        String seconds = TimelinePage.number(Math.round((last - first) / 100.0) / 10.0);
        TreeSet<String> merchants = parsed.stream().map(TimelineCommand::merchant).filter(m -> m != null)
                .collect(Collectors.toCollection(TreeSet::new));
        TreeSet<String> workers = parsed.stream().map(EventLine::worker).collect(Collectors.toCollection(TreeSet::new));
        boolean perMerchant = merchants.size() > 1;
        List<TimelineChart.Entry> entries = new ArrayList<>();
        for (EventLine line : parsed) {
            String lane = perMerchant && merchant(line) != null ? line.worker() + " · " + merchant(line) : line.worker();
            entries.add(entry(line, line.at() - first, lane));
        }
        String name = title != null ? title : "events of " + ("-".equals(events) ? "stdin" : Path.of(events).getFileName().toString());
        TimelineChart chart = TimelineChart.builder(name).entries(entries, 1 / 1000.0).build();
        Map<String, String> facts = new LinkedHashMap<>();
        facts.put("events", ("-".equals(events) ? "stdin" : events) + ": " + parsed.size() + " event lines"
                + (lines.size() > parsed.size() ? ", " + (lines.size() - parsed.size()) + " other lines skipped" : ""));
        facts.put("from", Instant.ofEpochMilli(first).toString());
        facts.put("to", Instant.ofEpochMilli(last) + " (" + seconds + " s)");
        facts.put("workers", workers.size() + ": " + abbreviated(workers));
        facts.put("merchants", merchants.size() + (merchants.isEmpty() ? "" : ": " + abbreviated(merchants)));
        facts.put("version", "fenced " + FencedCli.VERSION);
        StringBuilder body = new StringBuilder("<header><h1>").append(TimelinePage.esc(name)).append("</h1>\n")
                .append(TimelinePage.metadata(facts)).append("</header>\n").append(TimelinePage.legend(chart.kinds()))
                .append(chart.figure(TimelineChart.axisEnd(List.of(chart)), "seconds", caption(chart)));
        try {
            Files.writeString(html, TimelinePage.page(name, body.toString()), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new UsageException("cannot write " + html + ": no such directory");
        }
        System.out.printf("timeline of %d events (%d workers, %d merchants, %s s) written to %s%n", parsed.size(), workers.size(),
                merchants.size(), seconds, html);
        return 0;
    }

    private List<String> read() {
        try {
            if ("-".equals(events)) {
                return new java.io.BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).lines().toList();
            }
            return Files.readAllLines(Path.of(events), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new UsageException("no such file: " + events);
        } catch (IOException | UncheckedIOException e) {
            throw new UsageException("cannot read " + events + ": " + e.getMessage());
        }
    }

    private static String caption(TimelineChart chart) {
        StringBuilder caption = new StringBuilder();
        for (Map.Entry<TimelineKind, Long> count : chart.counts().entrySet()) {
            caption.append(caption.length() == 0 ? "" : ", ").append(count.getKey().count(count.getValue()));
        }
        return caption.length() == 0 ? "no writes, refusals or deliveries" : caption.toString();
    }

    private static String abbreviated(TreeSet<String> names) {
        return names.size() <= 10 ? String.join(", ", names) : String.join(", ", new ArrayList<>(names).subList(0, 10)) + " and "
                + (names.size() - 10) + " more";
    }

    private static String merchant(EventLine line) {
        if (line instanceof EventLine.Event e) {
            return e.merchant();
        }
        if (line instanceof EventLine.Result r) {
            return r.merchant();
        }
        return line instanceof EventLine.Job j ? j.merchant() : null;
    }

    private static TimelineChart.Entry entry(EventLine line, long elapsedMs, String lane) {
        if (line instanceof EventLine.Event e) {
            return new TimelineChart.Entry(elapsedMs, lane, e.type().wireName(), e.refund(), e.token(), e.detail());
        }
        if (line instanceof EventLine.Result r) {
            return new TimelineChart.Entry(elapsedMs, lane, "result", r.refusedAt(), r.token(), r.result().name());
        }
        EventLine.Job j = (EventLine.Job) line;
        return new TimelineChart.Entry(elapsedMs, lane, j.type().wireName(), null, 0,
                "job " + j.sequence() + ", delivery " + j.delivery() + (j.detail() == null ? "" : ": " + j.detail()));
    }
}
