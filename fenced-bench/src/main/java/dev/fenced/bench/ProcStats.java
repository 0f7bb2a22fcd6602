package dev.fenced.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Readings from Linux's {@code /proc}: the machine's CPU time, each process's CPU time, a process's
 * resident set, and which process listens on a loopback port. Linux only; elsewhere the readings are
 * empty or zero, and the tables say "n/a".
 */
final class ProcStats {
    /** Clock ticks per second of {@code /proc} times: {@code getconf CLK_TCK} is 100 on Linux x86 and arm64. */
    static final double TICKS_PER_SECOND = 100.0;

    private ProcStats() {
    }

    /** The machine's CPU ticks, all cores added: busy (user, nice, system, irq, softirq, steal) and total. */
    record MachineCpu(long busy, long total) {
        double busyShareSince(MachineCpu before) {
            long totalDelta = total - before.total;
            return totalDelta <= 0 ? Double.NaN : (busy - before.busy) / (double) totalDelta;
        }

        double busySecondsSince(MachineCpu before) {
            return (busy - before.busy) / TICKS_PER_SECOND;
        }
    }

    static MachineCpu machine() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long user = Long.parseLong(f[1]);
            long nice = Long.parseLong(f[2]);
            long system = Long.parseLong(f[3]);
            long idle = Long.parseLong(f[4]);
            long iowait = Long.parseLong(f[5]);
            long irq = Long.parseLong(f[6]);
            long softirq = Long.parseLong(f[7]);
            long steal = f.length > 8 ? Long.parseLong(f[8]) : 0;
            long busy = user + nice + system + irq + softirq + steal;
            return new MachineCpu(busy, busy + idle + iowait);
        } catch (IOException | RuntimeException e) {
            return new MachineCpu(0, 0);
        }
    }

    /** One process's parent and CPU ticks (user + system, all its threads). */
    record ProcessCpu(long pid, long parent, long ticks) {
    }

    /** Every process visible now, by pid. */
    static Map<Long, ProcessCpu> processes() {
        Map<Long, ProcessCpu> all = new HashMap<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path dir : dirs) {
                try {
                    String stat = Files.readString(dir.resolve("stat"));
                    // the command name, in parentheses, may hold spaces: the fields start after the last ')'
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
                    long pid = Long.parseLong(dir.getFileName().toString());
                    all.put(pid, new ProcessCpu(pid, Long.parseLong(f[1]), Long.parseLong(f[11]) + Long.parseLong(f[12])));
                } catch (IOException | RuntimeException gone) {
                    // the process ended while we read
                }
            }
        } catch (IOException e) {
            return Map.of();
        }
        return all;
    }

    /** One thread's name, as Linux keeps it (15 characters: "C2 CompilerThre"), and its CPU ticks (user + system). */
    record ThreadCpu(String name, long ticks) {
    }

    /** Each thread of process {@code pid} whose name passes {@code named}, by thread id; empty once the process is gone. */
    static Map<Long, ThreadCpu> threads(long pid, Predicate<String> named) {
        return threads(pid, named, new HashSet<>());
    }

    /**
     * As {@link #threads(long, Predicate)}, reading no thread in {@code passedOver} and adding to it
     * each thread whose name fails {@code named}: a caller that reads the same process again and
     * again reads one file per thread once, then only its chosen threads' (a JVM has a hundred
     * threads; thread ids are not reused within a run).
     */
    static Map<Long, ThreadCpu> threads(long pid, Predicate<String> named, Set<Long> passedOver) {
        Map<Long, ThreadCpu> threads = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : tasks) {
                try {
                    long tid = Long.parseLong(task.getFileName().toString());
                    if (passedOver.contains(tid)) {
                        continue;
                    }
                    String stat = Files.readString(task.resolve("stat"));
                    String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    if (named.test(name)) {
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
                        threads.put(tid, new ThreadCpu(name, Long.parseLong(f[11]) + Long.parseLong(f[12])));
                    } else {
                        passedOver.add(tid);
                    }
                } catch (IOException | RuntimeException gone) {
                    // the thread ended while we read
                }
            }
        } catch (IOException | RuntimeException gone) {
            return Map.of();
        }
        return threads;
    }

    /** CPU seconds the processes in {@code pids} (and their children, when asked) used between the two readings. */
    static double cpuSeconds(Map<Long, ProcessCpu> before, Map<Long, ProcessCpu> after, Set<Long> pids, boolean withChildren) {
        long ticks = 0;
        for (ProcessCpu now : after.values()) {
            if (pids.contains(now.pid()) || (withChildren && pids.contains(now.parent()))) {
                ProcessCpu then = before.get(now.pid());
                ticks += now.ticks() - (then == null ? 0 : then.ticks());
            }
        }
        return ticks / TICKS_PER_SECOND;
    }

    /** A field of {@code /proc/<pid>/status} in KiB, e.g. {@code VmRSS} or {@code VmHWM}; empty once the process is gone. */
    static OptionalLong statusKib(long pid, String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith(field + ":")) {
                    return OptionalLong.of(Long.parseLong(line.substring(field.length() + 1).trim().split("\\s+")[0]));
                }
            }
        } catch (IOException | RuntimeException gone) {
            // not Linux, or the process ended
        }
        return OptionalLong.empty();
    }

    /**
     * The process that listens on TCP {@code port} (any local address), found through the socket's
     * inode in {@code /proc/net/tcp[6]} and the processes' file descriptors; empty when the server
     * runs on another machine, in another container, or under a user whose descriptors we may not read.
     */
    static OptionalLong listener(int port) {
        Set<String> inodes = new HashSet<>();
        String hexPort = String.format(":%04X", port);
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            try {
                for (String line : Files.readAllLines(Path.of(table))) {
                    String[] f = line.trim().split("\\s+");
                    if (f.length > 9 && f[1].endsWith(hexPort) && f[3].equals("0A")) { // 0A: LISTEN
                        inodes.add("socket:[" + f[9] + "]");
                    }
                }
            } catch (IOException | RuntimeException e) {
                // no such table
            }
        }
        if (inodes.isEmpty()) {
            return OptionalLong.empty();
        }
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path dir : dirs) {
                try (DirectoryStream<Path> fds = Files.newDirectoryStream(dir.resolve("fd"))) {
                    for (Path fd : fds) {
                        try {
                            if (inodes.contains(Files.readSymbolicLink(fd).toString())) {
                                return OptionalLong.of(Long.parseLong(dir.getFileName().toString()));
                            }
                        } catch (IOException | RuntimeException closed) {
                            // closed meanwhile
                        }
                    }
                } catch (IOException | RuntimeException notOurs) {
                    // another user's process, or gone
                }
            }
        } catch (IOException e) {
            return OptionalLong.empty();
        }
        return OptionalLong.empty();
    }
}
