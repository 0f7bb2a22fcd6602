package dev.fenced.embedded;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * Real {@code etcd} processes on free loopback ports: one member ({@link #start()}) or a cluster
 * ({@link #start(int)}) whose members can be killed, paused and restarted on their own data, for
 * tests of leader changes. The binary comes from the PATH (Debian's package {@code etcd-server});
 * none is downloaded.
 *
 * <p>Elections are fast (50 ms heartbeats, a 500 ms election timeout): a new leader within about
 * a second of a kill, and a minimum lease TTL of 1 s (etcd's is 1.5 election timeouts, rounded up
 * to whole seconds). Not for production: every member writes to a temporary directory (on
 * {@code /dev/shm} where there is one), deleted by {@link #close()}.
 */
public final class EmbeddedEtcd implements AutoCloseable {
    private static final String BINARY = "etcd";
    private static final String INSTALL = "install it (Debian: apt-get install etcd-server) or name a running one with FENCED_ETCD_URL";
    private static final long START_SECONDS = 20;

    private final Path root;
    private final List<Member> members;
    /** Between the members of a cluster, so that {@link #isolate} can cut one off; null for one member. */
    private PeerProxies proxies;

    private EmbeddedEtcd(Path root, List<Member> members) {
        this.root = root;
        this.members = members;
    }

    /** Starts one member; an IllegalStateException that says what to install when there is no binary. */
    public static EmbeddedEtcd start() {
        return start(1);
    }

    /**
     * Starts a cluster of {@code size} members and waits until each answers healthy (a leader is
     * elected); an IllegalStateException that says what to install when there is no binary.
     */
    public static EmbeddedEtcd start(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("an etcd cluster has at least one member, not " + size);
        }
        String binary = LocalProcesses.binary(BINARY, INSTALL);
        Path root;
        try {
            // etcd syncs its log on every write: on tmpfs a sync is free, and a test's thousands of grants take seconds, not a minute.
            Path shm = Path.of("/dev/shm");
            root = Files.isDirectory(shm) && Files.isWritable(shm) ? Files.createTempDirectory(shm, "fenced-etcd")
                    : Files.createTempDirectory("fenced-etcd");
        } catch (IOException e) {
            throw new UncheckedIOException("could not prepare etcd's data directory", e);
        }
        List<Member> members = IntStream.range(0, size)
                .mapToObj(i -> new Member("m" + i, LocalProcesses.freePort(), LocalProcesses.freePort(),
                        size > 1 ? LocalProcesses.freePort() : 0, root.resolve("m" + i)))
                .collect(Collectors.toCollection(ArrayList::new));
        String initialCluster = members.stream().map(m -> m.name + "=" + m.advertisedPeerUrl()).collect(Collectors.joining(","));
        EmbeddedEtcd etcd = new EmbeddedEtcd(root, members);
        try {
            if (size > 1) {
                etcd.proxies = new PeerProxies(members.stream().map(Member::advertisedPeerUrl).toList());
                for (int i = 0; i < size; i++) {
                    etcd.proxies.start(i, members.get(i).proxyPort, members.get(i).peerPort);
                }
            }
            for (Member member : members) {
                member.initialCluster = initialCluster;
                member.launch(binary);
            }
            for (int i = 0; i < size; i++) {
                etcd.awaitHealthy(i);
            }
        } catch (RuntimeException e) {
            etcd.close();
            throw e;
        }
        return etcd;
    }

    /** True when an {@code etcd} binary is on the PATH (or in the usual system folders). */
    public static boolean isAvailable() {
        try {
            LocalProcesses.binary(BINARY, INSTALL);
            return true;
        } catch (IllegalStateException none) {
            return false;
        }
    }

    /** How many members the cluster has, running or not. */
    public int size() {
        return members.size();
    }

    /** Every member's client URL, comma-separated: {@code http://127.0.0.1:p1,http://127.0.0.1:p2}. */
    public String endpoints() {
        return members.stream().map(Member::clientUrl).collect(Collectors.joining(","));
    }

    /** One member's client URL, {@code http://127.0.0.1:port}. */
    public String endpoint(int member) {
        return members.get(member).clientUrl();
    }

    /** Whether a member's process is running (a paused one is). */
    public boolean isRunning(int member) {
        Process process = members.get(member).process;
        return process != null && process.isAlive();
    }

    /**
     * The member that says it is the leader (its {@code etcd_server_is_leader} metric), or -1 when
     * no running member does; a member that does not answer within a second is passed over.
     */
    public int leader() {
        for (int i = 0; i < members.size(); i++) {
            if (isRunning(i) && !members.get(i).paused && members.get(i).metrics().contains("\netcd_server_is_leader 1")) {
                return i;
            }
        }
        return -1;
    }

    /** Waits until a running member says it leads, and returns it; fails after 15 s. */
    public int awaitLeader() {
        int[] leader = {-1};
        if (LocalProcesses.await(() -> (leader[0] = leader()) >= 0, Duration.ofSeconds(15))) {
            return leader[0];
        }
        throw new IllegalStateException("no etcd member leads after 15 s; see the logs under " + root);
    }

    /** Kills the current leader with SIGKILL and returns which member it was. */
    public int killLeader() {
        int leader = awaitLeader();
        kill(leader);
        return leader;
    }

    /** Kills a member with SIGKILL, as a crash would: its data stays for {@link #restart(int)}. */
    public void kill(int member) {
        Process process = members.get(member).process;
        if (process != null) {
            process.destroyForcibly(); // SIGKILL ends a suspended member too
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Stops a member with SIGSTOP: it keeps its sockets and its state but answers nothing, as a
     * process in a long GC pause or a host cut off from the others; {@link #resume} continues it.
     */
    public void suspend(int member) {
        signal(member, "STOP");
        members.get(member).paused = true;
    }

    /** Continues a member {@link #suspend suspended} with SIGCONT. */
    public void resume(int member) {
        signal(member, "CONT");
        members.get(member).paused = false;
    }

    /**
     * Cuts a member off from the others, as a network partition would, while it keeps running and
     * answering its clients: every peer connection to or from it is closed, and new ones are refused
     * until {@link #heal}. It serves serializable reads from what it had; anything that needs a
     * quorum waits. Only for a cluster of more than one member.
     */
    public void isolate(int member) {
        requireProxies().isolate(member);
    }

    /** Lets an {@link #isolate isolated} member talk to the others again. */
    public void heal(int member) {
        requireProxies().heal(member);
    }

    private PeerProxies requireProxies() {
        if (proxies == null) {
            throw new IllegalStateException("one member has no one to be cut off from");
        }
        return proxies;
    }

    /** Starts a killed member again on its own data and ports, and waits until it answers healthy. */
    public void restart(int member) {
        if (isRunning(member)) {
            throw new IllegalStateException("member " + member + " is running; kill it first");
        }
        members.get(member).launch(LocalProcesses.binary(BINARY, INSTALL));
        awaitHealthy(member);
    }

    private void signal(int member, String signal) {
        Process process = members.get(member).process;
        if (process == null || !process.isAlive()) {
            throw new IllegalStateException("member " + member + " is not running");
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not signal etcd member " + member, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** The last {@code count} lines of {@code log}, on one line; what could be read of it. */
    private static String lastLines(Path log, int count) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - count), lines.size()));
        } catch (IOException | RuntimeException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }

    private void awaitHealthy(int member) {
        Member m = members.get(member);
        boolean healthy = LocalProcesses.await(() -> {
            if (!m.process.isAlive()) {
                // the log goes with the data directory when the cluster closes: its end is kept in the message
                throw new IllegalStateException("etcd member " + m.name + " exited with " + m.process.exitValue() + "; its log ends: "
                        + lastLines(m.log(), 5));
            }
            return m.get("/health").contains("\"health\":\"true\"");
        }, Duration.ofSeconds(START_SECONDS));
        if (healthy) {
            return;
        }
        throw new IllegalStateException("etcd member " + m.name + " was not healthy within " + START_SECONDS + " s; see " + m.log());
    }

    /** Stops every member (SIGTERM, then SIGKILL) and deletes their data. */
    @Override
    public void close() {
        if (proxies != null) {
            proxies.close();
        }
        for (Member member : members) {
            if (member.paused && member.process != null && member.process.isAlive()) {
                resume(members.indexOf(member)); // a stopped process never handles its SIGTERM
            }
            member.stop();
        }
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory: the system cleans it eventually
        }
    }

    @Override
    public String toString() {
        return "EmbeddedEtcd[" + endpoints() + "]";
    }

    private static final class Member {
        final String name;
        final int clientPort;
        final int peerPort;
        /** Where the others reach it: its {@link PeerProxies proxy}, or its own peer port for a single member. */
        final int proxyPort;
        final Path data;
        String initialCluster;
        volatile Process process;
        volatile boolean paused;

        Member(String name, int clientPort, int peerPort, int proxyPort, Path data) {
            this.name = name;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            this.proxyPort = proxyPort;
            this.data = data;
        }

        String clientUrl() {
            return "http://127.0.0.1:" + clientPort;
        }

        String peerUrl() {
            return "http://127.0.0.1:" + peerPort;
        }

        String advertisedPeerUrl() {
            return "http://127.0.0.1:" + (proxyPort == 0 ? peerPort : proxyPort);
        }

        Path log() {
            return data.resolveSibling(name + ".log");
        }

        void launch(String binary) {
            List<String> command = List.of(binary, "--name", name, "--data-dir", data.toString(),
                    "--listen-client-urls", clientUrl(), "--advertise-client-urls", clientUrl(),
                    "--listen-peer-urls", peerUrl(), "--initial-advertise-peer-urls", advertisedPeerUrl(),
                    "--initial-cluster", initialCluster, "--initial-cluster-state", "new",
                    "--initial-cluster-token", "fenced-" + data.getParent().getFileName(),
                    // Fast elections keep leader-change tests short, and bring the minimum lease TTL down to 1 s.
                    "--heartbeat-interval", "50", "--election-timeout", "500");
            try {
                process = new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile())).start();
                paused = false;
            } catch (IOException e) {
                throw new UncheckedIOException("could not start etcd", e);
            }
        }

        String metrics() {
            return get("/metrics");
        }

        /** The body of a GET on the client port, or "" when the member does not answer within a second. */
        String get(String path) {
            try {
                HttpURLConnection connection = (HttpURLConnection) URI.create(clientUrl() + path).toURL().openConnection();
                connection.setConnectTimeout(1000);
                connection.setReadTimeout(1000);
                try (InputStream in = connection.getInputStream()) {
                    return new String(in.readAllBytes(), StandardCharsets.UTF_8);
                } finally {
                    connection.disconnect();
                }
            } catch (IOException notAnswering) {
                return "";
            }
        }

        void stop() {
            Process p = process;
            if (p == null) {
                return;
            }
            p.destroy();
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
