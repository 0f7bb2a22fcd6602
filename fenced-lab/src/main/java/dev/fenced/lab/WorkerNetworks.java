package dev.fenced.lab;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * Network namespaces for the chaos run's workers, so that a fault can cut a worker's links
 * silently (packets dropped, no reset, as a partition does) and heal them.
 *
 * <p>Each worker runs in a namespace of its own, joined to the host by a veth pair on a /30 of
 * {@code 10.201.0.0/16}. Inside it, every connection to {@code 127.0.0.1} is sent over the pair
 * (DNAT to the host's end); on the host, what arrives on the run's pairs is delivered to
 * {@code 127.0.0.1} from {@code 127.0.0.1} (DNAT and SNAT, with {@code route_localnet} on the
 * host's end). So the workers use the run's URLs unchanged, Sentinel's answers included, and the
 * servers, bound to loopback, see loopback clients. A cut is an nftables rule inside the worker's
 * namespace that drops what goes to, or comes from, the host's end of its pair on the link's
 * ports: only addresses of namespaces this run made are touched, never the machine's own network.
 *
 * <p>Needs root with the capabilities to make namespaces, iproute2's {@code ip} and {@code nft}
 * (Debian: nftables). Namespaces are named {@code fenced-chaos-<pid>-<n>} and the host's table
 * {@code fenced_chaos_<pid>} (pid in base 36), shared by every run of this JVM; those of a JVM that
 * is gone are removed by the next run (by pid: runs in separate pid namespaces that share one network
 * namespace would take each other's for dead). Nothing checks that 10.201.0.0/16 is free on the
 * machine beyond the address of each /30 made.
 */
final class WorkerNetworks implements AutoCloseable {
    /** Which way a cut drops packets. */
    enum Direction {
        TO_SERVER("worker to server"), FROM_SERVER("server to worker"), BOTH("both ways");

        private final String label;

        Direction(String label) {
            this.label = label;
        }

        @Override
        public String toString() {
            return label;
        }
    }

    private static final String PID = Long.toString(ProcessHandle.current().pid(), 36);
    /**
     * Interface names: {@code fc<pid>-h<n>} on the host, {@code fc<pid>-n<n>} in the namespace, at most 12 of Linux's 15
     * characters; the dash, which base 36 has not, keeps one JVM's names and wildcard apart from another's.
     */
    private static final String INTERFACES = "fc" + PID + "-";
    private static final String TABLES = "fenced_chaos_";
    private static final String HOST_TABLE = TABLES + PID;
    private static final String NAMESPACES_PREFIX = "fenced-chaos-";
    private static final String NAMESPACES = NAMESPACES_PREFIX + PID + "-";
    /** /30 blocks in 10.201.0.0/16; a JVM starts at a block drawn from its pid, so that two runs on one machine rarely meet. */
    private static final int BLOCKS = 16_384;
    private static final AtomicInteger NEXT = new AtomicInteger((int) (ProcessHandle.current().pid() * 64 % BLOCKS));
    private static final long COMMAND_LIMIT_SECONDS = 15;
    /** Exit code of the set-up script when the block's address is taken on this machine: the next block is tried. */
    private static final int ADDRESS_TAKEN = 17;
    private static int openRuns;

    private final List<Namespace> made = new ArrayList<>();

    private WorkerNetworks() {
    }

    /** Why namespaces cannot be made here, or empty when they can. */
    static Optional<String> unavailable() {
        if (!root()) {
            return Optional.of("network namespaces need root");
        }
        for (String tool : List.of("ip", "nft")) {
            if (!onPath(tool)) {
                return Optional.of("'" + tool + "' is not installed (Debian: apt-get install " + (tool.equals("ip") ? "iproute2" : "nftables") + ")");
            }
        }
        // Root without CAP_SYS_ADMIN or CAP_NET_ADMIN (a container's) cannot: try, before any server starts.
        String probe = NAMESPACES + "probe";
        Outcome made = execute("ip netns add " + probe, null, List.of("ip", "netns", "add", probe));
        runQuietly("ip", "netns", "del", probe);
        if (made.exit() != 0) {
            return Optional.of("'ip netns add' failed: " + made.output().strip());
        }
        Outcome tables = execute("nft list tables", null, List.of("nft", "list", "tables"));
        return tables.exit() == 0 ? Optional.empty() : Optional.of("'nft list tables' failed: " + tables.output().strip());
    }

    private static boolean root() {
        try {
            return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException notLinux) {
            return false;
        }
    }

    /** On the PATH, which is where this class starts it from. */
    private static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && new File(dir, tool).canExecute()) {
                return true;
            }
        }
        return false;
    }

    /** Opens the run's networks: the host's table, made by the first run of this JVM, after removing what dead JVMs left. */
    static WorkerNetworks open() {
        synchronized (WorkerNetworks.class) {
            if (openRuns == 0) {
                removeLeftovers();
                run("nft -f -", "table ip " + HOST_TABLE + " {\n"
                        + "  chain deliver {\n    type nat hook prerouting priority -100;\n"
                        + "    iifname \"" + INTERFACES + "h*\" ip daddr 10.201.0.0/16 dnat to 127.0.0.1\n  }\n"
                        + "  chain as_loopback {\n    type nat hook input priority 100;\n"
                        + "    iifname \"" + INTERFACES + "h*\" snat to 127.0.0.1\n  }\n}\n", "nft", "-f", "-");
            }
            openRuns++;
        }
        return new WorkerNetworks();
    }

    /** A namespace of its own for the worker named {@code worker}, reaching the host's loopback servers. */
    synchronized Namespace create(String worker) {
        for (int attempt = 0; attempt < 64; attempt++) {
            int n = NEXT.getAndIncrement();
            int block = Math.floorMod(n, BLOCKS);
            String base = "10.201." + block / 64 + ".";
            String id = Integer.toString(n, 36);
            Namespace ns = new Namespace(worker, NAMESPACES + id, INTERFACES + "h" + id, INTERFACES + "n" + id,
                    base + (block % 64 * 4 + 1), base + (block % 64 * 4 + 2));
            int exit = ns.setUp();
            if (exit == 0) {
                made.add(ns);
                return ns;
            }
            if (exit != ADDRESS_TAKEN) {
                throw new IllegalStateException("could not make a network namespace for " + worker + " (exit " + exit + ")");
            }
        }
        throw new IllegalStateException("no free /30 in 10.201.0.0/16 for " + worker + "'s network namespace after 64 tries");
    }

    /** Removes every namespace this run made, and the host's table when no other run of this JVM is open. */
    @Override
    public synchronized void close() {
        made.forEach(Namespace::close);
        made.clear();
        synchronized (WorkerNetworks.class) {
            if (--openRuns == 0) {
                runQuietly("nft", "delete", "table", "ip", HOST_TABLE);
            }
        }
    }

    /** Namespaces and host tables of JVMs that are gone. */
    private static void removeLeftovers() {
        for (String line : run("ip netns list", null, "ip", "netns", "list").split("\n")) {
            String name = line.split(" ")[0];
            String[] parts = name.startsWith(NAMESPACES_PREFIX) ? name.substring(NAMESPACES_PREFIX.length()).split("-") : new String[0];
            if (parts.length == 2 && dead(parts[0])) {
                runQuietly("ip", "netns", "del", name);
            }
        }
        for (String line : run("nft list tables", null, "nft", "list", "tables").split("\n")) {
            String[] words = line.trim().split(" ");
            if (words.length == 3 && words[1].equals("ip") && words[2].startsWith(TABLES) && dead(words[2].substring(TABLES.length()))) {
                runQuietly("nft", "delete", "table", "ip", words[2]);
            }
        }
    }

    private static boolean dead(String pid36) {
        try {
            return ProcessHandle.of(Long.parseLong(pid36, 36)).map(p -> !p.isAlive()).orElse(true);
        } catch (NumberFormatException notOurs) {
            return false;
        }
    }

    /** One worker's namespace: what starts a process in it, and the cuts of its links. */
    static final class Namespace implements AutoCloseable {
        private final String worker;
        private final String name;
        private final String hostSide;
        private final String workerSide;
        private final String hostAddress;
        private final String workerAddress;
        private volatile boolean cut;

        private Namespace(String worker, String name, String hostSide, String workerSide, String hostAddress, String workerAddress) {
            this.worker = worker;
            this.name = name;
            this.hostSide = hostSide;
            this.workerSide = workerSide;
            this.hostAddress = hostAddress;
            this.workerAddress = workerAddress;
        }

        /** The exit code of the set-up script: 0, {@link #ADDRESS_TAKEN}, or a failure (after which nothing is left). */
        private int setUp() {
            String script = String.join("\n",
                    "set -e",
                    // Taken: by another run's /30, or by a network of the machine's own that a route of ours would shadow.
                    "if ip -o -4 addr show | grep -qF ' " + hostAddress + "/' || ip -4 route show to match " + hostAddress
                            + " | grep -qv '^default'; then exit " + ADDRESS_TAKEN + "; fi",
                    "ip netns add " + name,
                    "ip link add " + hostSide + " type veth peer name " + workerSide,
                    "ip link set " + workerSide + " netns " + name,
                    "ip addr add " + hostAddress + "/30 dev " + hostSide,
                    // The host delivers to 127.0.0.1 what arrives here: without route_localnet the kernel drops it as a martian.
                    "echo 1 > /proc/sys/net/ipv4/conf/" + hostSide + "/route_localnet",
                    "ip link set " + hostSide + " up",
                    "ip -n " + name + " link set lo up",
                    // IPv4 only inside: 'localhost' must not resolve to a ::1 that is neither carried to the host nor cut.
                    "ip netns exec " + name + " sh -c 'f=/proc/sys/net/ipv6/conf/all/disable_ipv6; if [ -e $f ]; then echo 1 > $f; fi'",
                    "ip -n " + name + " addr add " + workerAddress + "/30 dev " + workerSide,
                    "ip -n " + name + " link set " + workerSide + " up",
                    // Loopback-sourced packets leave the namespace: route_localnet there too, then masquerade gives them its address.
                    "ip netns exec " + name + " sh -c 'echo 1 > /proc/sys/net/ipv4/conf/all/route_localnet'",
                    "ip netns exec " + name + " nft -f - <<'EOF'",
                    "table ip fenced {",
                    "  chain to_host {\n    type nat hook output priority -100;\n    ip daddr 127.0.0.0/8 dnat to " + hostAddress + "\n  }",
                    "  chain from_here {\n    type nat hook postrouting priority 100;\n    ip saddr 127.0.0.0/8 oifname \"" + workerSide
                            + "\" masquerade\n  }",
                    // Filter after the DNAT: what leaves for the host has the host's address as its destination by then.
                    "  chain cut_out {\n    type filter hook output priority 0;\n  }",
                    "  chain cut_in {\n    type filter hook input priority 0;\n  }",
                    "}",
                    "EOF");
            Outcome outcome;
            try {
                outcome = execute("set up namespace " + name, null, List.of("sh", "-c", script));
            } catch (RuntimeException e) {
                close();
                throw e;
            }
            if (outcome.exit() != 0 && outcome.exit() != ADDRESS_TAKEN) {
                close();
                throw new IllegalStateException("could not make network namespace " + name + " for " + worker + ": " + outcome.output().strip());
            }
            return outcome.exit();
        }

        /** What to put before a command to run it in this namespace: {@code ip netns exec} execs it, so its pid is the command's. */
        List<String> launcher() {
            return List.of("ip", "netns", "exec", name);
        }

        String name() {
            return name;
        }

        /** Drops, silently, what crosses this worker's link to {@code ports} in {@code direction}, until {@link #heal()}. */
        void cut(Set<Integer> ports, Direction direction) {
            String set = "{ " + new TreeSet<>(ports).stream().map(String::valueOf).collect(Collectors.joining(", ")) + " }";
            StringBuilder rules = new StringBuilder();
            if (direction != Direction.FROM_SERVER) {
                rules.append("add rule ip fenced cut_out ip daddr ").append(hostAddress).append(" tcp dport ").append(set).append(" drop\n");
            }
            if (direction != Direction.TO_SERVER) {
                rules.append("add rule ip fenced cut_in ip saddr ").append(hostAddress).append(" tcp sport ").append(set).append(" drop\n");
            }
            inside(rules.toString());
            cut = true;
        }

        /** Drops everything between the worker and the host, both ways, until {@link #heal()}. */
        void isolate() {
            inside("add rule ip fenced cut_out ip daddr " + hostAddress + " drop\nadd rule ip fenced cut_in ip saddr " + hostAddress + " drop\n");
            cut = true;
        }

        /** Whether a cut is in force. */
        boolean isCut() {
            return cut;
        }

        /** Lifts every cut: what the kernel kept retransmitting goes through from now. */
        void heal() {
            inside("flush chain ip fenced cut_out\nflush chain ip fenced cut_in\n");
            cut = false;
        }

        private void inside(String rules) {
            run("nft in " + name, rules, "ip", "netns", "exec", name, "nft", "-f", "-");
        }

        /** Removes the namespace and, with it, its veth pair. */
        @Override
        public void close() {
            runQuietly("ip", "netns", "del", name);
            runQuietly("ip", "link", "del", hostSide);
        }

        @Override
        public String toString() {
            return name + " (" + workerAddress + ")";
        }
    }

    /** Its output goes to a file, read once it exited: a pipe read to its end would wait on the process unbounded. */
    private static Process start(List<String> command, File output) {
        try {
            return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output).start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not run " + command.get(0), e);
        }
    }

    /** Runs a command, feeding it {@code stdin}; its output, or an exception naming {@code what} when it fails or outlasts its bound. */
    private static String run(String what, String stdin, String... command) {
        Outcome outcome = execute(what, stdin, List.of(command));
        if (outcome.exit() != 0) {
            throw new IllegalStateException(what + " failed (exit " + outcome.exit() + "): " + outcome.output().strip());
        }
        return outcome.output();
    }

    private static void runQuietly(String... command) {
        try {
            execute(String.join(" ", command), null, List.of(command));
        } catch (RuntimeException ignored) {
            // cleaning up what may be gone already
        }
    }

    private record Outcome(int exit, String output) {
    }

    /** Runs {@code command} to its end, within {@link #COMMAND_LIMIT_SECONDS}. */
    private static Outcome execute(String what, String stdin, List<String> command) {
        Path output = null;
        try {
            output = Files.createTempFile("fenced-netns", ".out");
            Process process = start(command, output.toFile());
            try (OutputStream in = process.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            if (!process.waitFor(COMMAND_LIMIT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(what + " did not end within " + COMMAND_LIMIT_SECONDS + " s");
            }
            return new Outcome(process.exitValue(), Files.readString(output));
        } catch (IOException e) {
            throw new UncheckedIOException("could not run " + what, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for " + what, e);
        } finally {
            if (output != null) {
                output.toFile().delete();
            }
        }
    }
}
