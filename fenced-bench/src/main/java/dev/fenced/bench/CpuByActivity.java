package dev.fenced.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A process's CPU samples by what they were doing, from async-profiler's collapsed stacks taken
 * with its {@code threads} option (one line per stack: {@code [thread];root;...;leaf count}).
 * A sample goes to the first activity found walking from the leaf towards the root, so the time
 * a socket read spends in the kernel counts for the library that read (JDBC, the HTTP client),
 * and a park or a wake-up counts as threads and locks whoever asked for it. The JVM's own threads
 * (collectors, compilers) are told apart by their names.
 *
 * <pre>
 * JAVA_TOOL_OPTIONS='-agentpath:/path/libasyncProfiler.so=start,event=cpu,interval=1ms,threads,collapsed,file=/tmp/cpu-%p.txt'
 * java -cp benchmarks.jar dev.fenced.bench.CpuByActivity /tmp/cpu-1234.txt ...
 * </pre>
 *
 * It does not say why a frame ran, only where the time went; the patterns are prefixes of the
 * libraries fenced uses and would need a line for a new one.
 */
public final class CpuByActivity {
    /** What a sample was doing; the order is that of the table. */
    enum Activity {
        HTTP_CLIENT("HTTP client (JDK)", "jdk/internal/net/http/", "java/net/http/"),
        HTTP_SERVER("HTTP server (the simulated gateway)", "sun/net/httpserver/", "com/sun/net/httpserver/"),
        JSON("JSON (Jackson)", "com/fasterxml/jackson/"),
        JDBC("JDBC (pgjdbc, HikariCP)", "org/postgresql/", "com/zaxxer/hikari/", "org/mariadb/"),
        REDIS("Redis (Lettuce, Netty)", "io/lettuce/", "io/netty/"),
        NATS("NATS (jnats)", "io/nats/"),
        EVENTS("events, logging, metrics", "org/slf4j/", "ch/qos/logback/", "io/micrometer/", "dev/fenced/cli/Event",
                "dev/fenced/settlement/WorkerEvents", "dev/fenced/cli/Progress"),
        THREADS("threads and locks (park, wake-up, start)", "java/util/concurrent/locks/LockSupport", "java/lang/Thread.start",
                "java/lang/Object.wait", "java/lang/Object.notify", "Unsafe_Park", "Unsafe_Unpark", "__x64_sys_futex",
                "JVM_StartThread"),
        GC("GC and allocation", "G1", "MemAllocator", "OptoRuntime::new", "CollectedHeap"),
        JIT("JIT compiler"),
        FENCED("fenced's own code", "dev/fenced/"),
        OTHER("the JVM, the JDK and the kernel, other");

        final String label;
        final String[] prefixes;

        Activity(String label, String... prefixes) {
            this.label = label;
            this.prefixes = prefixes;
        }

        boolean matches(String frame) {
            for (String prefix : prefixes) {
                if (frame.startsWith(prefix)) {
                    return true;
                }
            }
            return false;
        }
    }

    private CpuByActivity() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 0) {
            System.err.println("usage: CpuByActivity COLLAPSED_FILE...");
            System.exit(2);
        }
        for (String file : args) {
            Map<Activity, Long> samples = of(Path.of(file));
            System.out.println(table(file, samples));
        }
    }

    /** Samples per activity in one collapsed file. */
    static Map<Activity, Long> of(Path collapsed) throws IOException {
        Map<Activity, Long> samples = new EnumMap<>(Activity.class);
        try (Stream<String> lines = Files.lines(collapsed)) {
            lines.filter(line -> line.matches(".* \\d+")).forEach(line -> { // a stack, a space, its count; nothing else
                int space = line.lastIndexOf(' ');
                long count = Long.parseLong(line.substring(space + 1));
                samples.merge(classify(line.substring(0, space).split(";")), count, Long::sum);
            });
        }
        return samples;
    }

    static Activity classify(String[] frames) {
        String thread = frames.length > 0 && frames[0].startsWith("[") ? frames[0] : "";
        if (thread.startsWith("[GC Thread") || thread.startsWith("[G1 ")) {
            return Activity.GC;
        }
        // The JVM cuts thread names to 15 characters here: "C2 CompilerThre".
        if (thread.contains("CompilerThre")) {
            return Activity.JIT;
        }
        for (int i = frames.length - 1; i >= 0; i--) {
            for (Activity activity : Activity.values()) {
                if (activity.matches(frames[i])) {
                    return activity;
                }
            }
        }
        return Activity.OTHER;
    }

    static String table(String what, Map<Activity, Long> samples) {
        long total = samples.values().stream().mapToLong(Long::longValue).sum();
        List<String> rows = new ArrayList<>();
        rows.add("| " + what + " (" + total + " samples) | share |");
        rows.add("|---|---:|");
        for (Activity activity : Activity.values()) {
            long count = samples.getOrDefault(activity, 0L);
            if (count > 0) {
                rows.add(String.format(Locale.ROOT, "| %s | %.1f %% |", activity.label, 100.0 * count / total));
            }
        }
        return String.join("\n", rows);
    }
}
