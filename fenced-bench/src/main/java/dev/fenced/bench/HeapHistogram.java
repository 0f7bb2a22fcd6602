package dev.fenced.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The live heap of another JVM, from {@code jcmd <pid> GC.class_histogram}: the histogram runs a
 * full collection and counts what survives it inside the same safepoint, so nothing the process
 * allocates between a collection and a reading slips in (as it would between {@code GC.run} and
 * {@code GC.heap_info} on a busy process).
 */
record HeapHistogram(long totalBytes, Map<String, Long> bytesByClass) {
    private static final Pattern ROW = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)");
    private static final Pattern TOTAL = Pattern.compile("^Total\\s+(\\d+)\\s+(\\d+)");

    static boolean available() {
        return Files.isExecutable(jcmd());
    }

    private static Path jcmd() {
        return Path.of(System.getProperty("java.home"), "bin", "jcmd");
    }

    /** Takes the histograms of several processes at once (one jcmd each), so that they see the same moment of a load. */
    static Map<Long, HeapHistogram> of(List<Long> pids) throws InterruptedException {
        Map<Long, Process> running = new LinkedHashMap<>();
        Map<Long, Path> outputs = new HashMap<>();
        try {
            for (long pid : pids) {
                Path output = Files.createTempFile("fenced-histogram-" + pid, ".txt");
                outputs.put(pid, output);
                running.put(pid, new ProcessBuilder(jcmd().toString(), Long.toString(pid), "GC.class_histogram")
                        .redirectErrorStream(true).redirectOutput(output.toFile()).start());
            }
            Map<Long, HeapHistogram> histograms = new LinkedHashMap<>();
            for (Map.Entry<Long, Process> entry : running.entrySet()) {
                Process jcmd = entry.getValue();
                if (!jcmd.waitFor(60, TimeUnit.SECONDS)) {
                    jcmd.destroyForcibly();
                    throw new IllegalStateException("jcmd " + entry.getKey() + " GC.class_histogram did not answer within 60 s");
                }
                String text = Files.readString(outputs.get(entry.getKey()), StandardCharsets.UTF_8);
                histograms.put(entry.getKey(), parse(entry.getKey(), text));
            }
            return histograms;
        } catch (IOException e) {
            throw new UncheckedIOException("could not run jcmd", e);
        } finally {
            running.values().forEach(Process::destroyForcibly);
            for (Path output : outputs.values()) {
                try {
                    Files.deleteIfExists(output);
                } catch (IOException ignored) {
                    // a temporary file
                }
            }
        }
    }

    private static HeapHistogram parse(long pid, String text) {
        Map<String, Long> byClass = new HashMap<>();
        for (String line : text.split("\n")) {
            Matcher total = TOTAL.matcher(line);
            if (total.find()) {
                return new HeapHistogram(Long.parseLong(total.group(2)), byClass);
            }
            Matcher row = ROW.matcher(line);
            if (row.find()) {
                byClass.merge(row.group(3), Long.parseLong(row.group(2)), Long::sum);
            }
        }
        throw new IllegalStateException("jcmd " + pid + " GC.class_histogram gave no total: "
                + text.substring(0, Math.min(300, text.length())).replace('\n', ' '));
    }

    /** The classes whose live bytes grew most from {@code base} to this histogram, largest first. */
    List<Map.Entry<String, Long>> largestGrowthSince(HeapHistogram base, int count) {
        List<Map.Entry<String, Long>> growth = new ArrayList<>();
        for (Map.Entry<String, Long> entry : bytesByClass.entrySet()) {
            growth.add(Map.entry(entry.getKey(), entry.getValue() - base.bytesByClass.getOrDefault(entry.getKey(), 0L)));
        }
        growth.sort(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()));
        return growth.subList(0, Math.min(count, growth.size()));
    }
}
