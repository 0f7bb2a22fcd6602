package dev.fenced.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * A PostgreSQL primary and a streaming replica on this machine, from the installed server's own
 * binaries ({@code initdb}, {@code pg_basebackup}, {@code pg_ctl}: Debian's
 * {@code /usr/lib/postgresql/<version>/bin}), each a real cluster on a loopback port, for failover
 * tests: the primary's WAL sender can be frozen (SIGSTOP) so that the replica lags, the primary
 * shut down at once (as a crash), the replica promoted. Replication is asynchronous, or synchronous
 * ({@code synchronous_standby_names} naming the replica, {@code synchronous_commit=on}). Run as
 * root, the clusters run as the {@code postgres} user, as PostgreSQL requires. Every wait is bounded.
 */
public final class PostgresPair implements AutoCloseable {
    private static final long COMMAND_SECONDS = 60;
    private static final String REPLICA_NAME = "replica1";
    /**
     * A replica whose sender is frozen waits for it: by default it would give up after 60 s and
     * reconnect to a new sender, which would catch it up and make the lag a test froze vanish.
     */
    private static final String WAIT_FOR_A_FROZEN_SENDER = "wal_receiver_timeout = 0\n";

    private final Path bin;
    private final Path base;
    /**
     * Which node is which: they trade places when {@link #rebuildReplica()} makes the crashed primary a
     * replica of the promoted one. Changed by one thread, between failovers; volatile for readers on others.
     */
    private volatile int primaryPort;
    private volatile int replicaPort;
    private volatile Path primaryDir;
    private volatile Path replicaDir;
    private final boolean synchronous;
    private volatile long frozenSender;

    private PostgresPair(Path bin, Path base, int primaryPort, int replicaPort, boolean synchronous) {
        this.bin = bin;
        this.base = base;
        this.primaryPort = primaryPort;
        this.replicaPort = replicaPort;
        this.primaryDir = base.resolve("primary");
        this.replicaDir = base.resolve("replica");
        this.synchronous = synchronous;
    }

    /** The newest installed server's binaries that can make a replica, if this machine has them. */
    public static Optional<Path> binaries() {
        Path root = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(root)) {
            return Optional.empty();
        }
        try (Stream<Path> versions = Files.list(root)) {
            return versions.map(version -> version.resolve("bin"))
                    .filter(bin -> Files.isExecutable(bin.resolve("pg_basebackup")) && Files.isExecutable(bin.resolve("initdb")))
                    .max(Comparator.comparing(bin -> versionOf(bin.getParent())));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static int versionOf(Path dir) {
        try {
            return Integer.parseInt(dir.getFileName().toString());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * Starts a primary and a replica streaming from it, and returns once the replica streams (and,
     * when {@code synchronous}, is the primary's synchronous standby).
     *
     * @throws IllegalStateException when the binaries are missing or a step fails, with its output
     */
    public static PostgresPair start(boolean synchronous) {
        Path bin = binaries().orElseThrow(() -> new IllegalStateException(
                "no PostgreSQL server binaries with pg_basebackup under /usr/lib/postgresql (apt-get install postgresql)"));
        try {
            Path base = Files.createTempDirectory("fenced-pg-pair");
            PostgresPair pair = new PostgresPair(bin, base, EmbeddedRedis.freePort(), EmbeddedRedis.freePort(), synchronous);
            try {
                pair.startBoth();
            } catch (IOException | RuntimeException e) {
                pair.close(); // a primary started before the replica failed must not outlive the attempt
                throw e;
            }
            return pair;
        } catch (IOException e) {
            throw new UncheckedIOException("could not make a directory for the PostgreSQL pair", e);
        }
    }

    private void startBoth() throws IOException {
        if (asRoot()) {
            run(List.of("chown", "postgres:postgres", base.toString()), false);
        }
        Path primary = primaryDir;
        Path replica = replicaDir;
        run(List.of(bin.resolve("initdb").toString(), "-D", primary.toString(), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                "--no-sync"), true);
        append(primary.resolve("postgresql.conf"), "port = " + primaryPort + "\n"
                + "listen_addresses = '127.0.0.1'\n"
                + "unix_socket_directories = '" + base + "'\n"
                + "wal_level = replica\n"
                + "max_wal_senders = 4\n"
                + "synchronous_commit = on\n"
                + "synchronous_standby_names = '" + (synchronous ? REPLICA_NAME : "") + "'\n");
        pgCtl(primary, "start");
        run(List.of(bin.resolve("pg_basebackup").toString(), "-h", "127.0.0.1", "-p", Integer.toString(primaryPort), "-U", "postgres",
                "-D", replica.toString(), "-R", "-X", "stream", "--no-sync"), true);
        append(replica.resolve("postgresql.conf"), "port = " + replicaPort + "\n"
                + "cluster_name = '" + REPLICA_NAME + "'\n"
                + WAIT_FOR_A_FROZEN_SENDER
                + "synchronous_standby_names = ''\n");
        pgCtl(replica, "start");
        awaitStreaming();
    }

    /** {@code jdbc:postgresql://127.0.0.1:<primary>/postgres?user=postgres}. */
    public String primaryUrl() {
        return url(primaryPort);
    }

    /** The replica's URL: read-only until {@link #promoteReplica()}. */
    public String replicaUrl() {
        return url(replicaPort);
    }

    /** Both servers, for clients that follow a failover: the driver connects to whichever is primary. */
    public String followingUrl() {
        return followingUrl("postgres") + "&socketTimeout=30";
    }

    /**
     * Both servers' {@code database}, for clients that follow a failover, with no socket timeout of
     * its own: a client's own bound (a pool's {@code socketTimeout} property) applies.
     */
    public String followingUrl(String database) {
        int low = Math.min(primaryPort, replicaPort);
        int high = Math.max(primaryPort, replicaPort);
        return "jdbc:postgresql://127.0.0.1:" + low + ",127.0.0.1:" + high + "/" + database
                + "?user=postgres&targetServerType=primary&connectTimeout=5";
    }

    /** Both servers' ports, whichever is primary now. */
    public List<Integer> ports() {
        return List.of(primaryPort, replicaPort);
    }

    /**
     * After {@link #crashPrimary()} and {@link #promoteReplica()}: the crashed primary, wiped, comes
     * back as a streaming replica of the promoted one ({@code pg_basebackup -R}), and the two trade
     * places, so that the pair can fail over again. While the new replica is made, the promoted
     * primary commits without waiting for a standby; once it streams, a synchronous pair waits again.
     */
    public void rebuildReplica() {
        Path promoted = replicaDir;
        Path crashed = primaryDir;
        int promotedPort = replicaPort;
        int crashedPort = primaryPort;
        // The promoted node is the primary from now, whatever becomes of the rebuild.
        primaryDir = promoted;
        primaryPort = promotedPort;
        replicaDir = crashed;
        replicaPort = crashedPort;
        execute(url(promotedPort), "ALTER SYSTEM SET synchronous_standby_names = ''");
        execute(url(promotedPort), "SELECT pg_reload_conf()");
        deleteTree(crashed);
        // A fast checkpoint: the default spreads it over minutes once the server has written anything.
        run(List.of(bin.resolve("pg_basebackup").toString(), "-h", "127.0.0.1", "-p", Integer.toString(promotedPort), "-U", "postgres",
                "-D", crashed.toString(), "-R", "-X", "stream", "-c", "fast", "--no-sync"), true);
        try {
            append(crashed.resolve("postgresql.conf"), "port = " + crashedPort + "\n"
                    + "cluster_name = '" + REPLICA_NAME + "'\n" + WAIT_FOR_A_FROZEN_SENDER);
        } catch (IOException e) {
            throw new UncheckedIOException("could not configure the rebuilt replica", e);
        }
        pgCtl(crashed, "start");
        if (synchronous) {
            execute(primaryUrl(), "ALTER SYSTEM SET synchronous_standby_names = '" + REPLICA_NAME + "'");
            execute(primaryUrl(), "SELECT pg_reload_conf()");
        }
        awaitStreaming();
    }

    private static void execute(String url, String sql) {
        try (Connection connection = DriverManager.getConnection(url); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + " failed: " + e.getMessage(), e);
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException("could not delete " + dir, e);
        }
    }

    private static String url(int port) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres&connectTimeout=5&socketTimeout=30";
    }

    public boolean synchronous() {
        return synchronous;
    }

    /** Waits until the replica has replayed everything the primary has written so far (at most 30 s). */
    public void awaitReplicaCaughtUp() {
        String lsn = queryOne(primaryUrl(), "SELECT pg_current_wal_lsn()::text");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if ("true".equals(queryOne(replicaUrl(), "SELECT (pg_last_wal_replay_lsn() >= '" + lsn + "'::pg_lsn)::text"))) {
                return;
            }
            pollPause();
        }
        throw new IllegalStateException("the replica did not replay " + lsn + " within 30 s");
    }

    /**
     * Freezes the primary's WAL sender with SIGSTOP: the replica receives nothing more, and a
     * synchronous commit waits for a confirmation that does not come, until {@link #thawReplication}.
     * (Freezing the replica's receiver would not do: the sender keeps filling the socket, and the
     * receiver reads it all once it runs again.)
     */
    public void freezeReplication() {
        frozenSender = Long.parseLong(queryOne(primaryUrl(), "SELECT pid::text FROM pg_stat_replication"));
        run(List.of("kill", "-STOP", Long.toString(frozenSender)), false);
    }

    /** Thaws a frozen WAL sender: the replica catches up. */
    public void thawReplication() {
        if (frozenSender != 0) {
            run(List.of("kill", "-CONT", Long.toString(frozenSender)), false);
            frozenSender = 0;
        }
    }

    /**
     * Shuts the primary down at once (immediate mode: no checkpoint, every client cut off), as a
     * crash does. A frozen WAL sender is killed first, with whatever it had not sent: the replica
     * never gets it.
     */
    public void crashPrimary() {
        if (frozenSender != 0) {
            run(List.of("kill", "-KILL", Long.toString(frozenSender)), false);
            frozenSender = 0;
        }
        pgCtl(primaryDir, "stop", "-m", "immediate");
    }

    /** Promotes the replica and returns once it accepts writes. */
    public void promoteReplica() {
        pgCtl(replicaDir, "promote");
    }

    /** How many sessions on the primary wait for the synchronous standby to confirm their commit. */
    public int commitsWaitingForStandby() {
        return Integer.parseInt(queryOne(primaryUrl(), "SELECT count(*)::text FROM pg_stat_activity WHERE wait_event = 'SyncRep'"));
    }

    /**
     * Cancels every commit waiting for the synchronous standby ({@code pg_cancel_backend}, what a
     * JDBC query timeout sends): PostgreSQL then reports each as committed, replicated or not.
     */
    public void cancelCommitsWaitingForStandby() {
        queryOne(primaryUrl(), "SELECT count(pg_cancel_backend(pid))::text FROM pg_stat_activity WHERE wait_event = 'SyncRep'");
    }

    private void awaitStreaming() {
        String condition = synchronous ? "state = 'streaming' AND sync_state = 'sync'" : "state = 'streaming'";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (!"0".equals(queryOne(primaryUrl(), "SELECT count(*)::text FROM pg_stat_replication WHERE " + condition))) {
                return;
            }
            pollPause();
        }
        throw new IllegalStateException("the replica did not stream from the primary within 30 s");
    }

    /** Between two looks at a server's state: replication moves in milliseconds. */
    private static void pollPause() {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
    }

    private static String queryOne(String url, String sql) {
        try (Connection connection = DriverManager.getConnection(url); Statement statement = connection.createStatement();
             ResultSet row = statement.executeQuery(sql)) {
            if (!row.next()) {
                throw new IllegalStateException("no row from " + sql);
            }
            return row.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + " failed: " + e.getMessage(), e);
        }
    }

    private void pgCtl(Path dataDir, String... action) {
        List<String> command = new ArrayList<>(List.of(bin.resolve("pg_ctl").toString(), "-D", dataDir.toString(), "-w", "-t", "30",
                "-l", dataDir.resolveSibling(dataDir.getFileName() + ".log").toString()));
        command.addAll(List.of(action));
        run(command, true);
    }

    private static void append(Path file, String text) throws IOException {
        Files.writeString(file, text, StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
    }

    private static boolean asRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** Runs a command (as the postgres user when asked and this is root), bounded, and fails with its output. */
    private static void run(List<String> command, boolean asPostgres) {
        List<String> full = new ArrayList<>();
        if (asPostgres && asRoot()) {
            full.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        full.addAll(command);
        try {
            Process process = new ProcessBuilder(full).redirectErrorStream(true).start();
            if (!process.waitFor(COMMAND_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish within " + COMMAND_SECONDS + " s");
            }
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed (exit " + process.exitValue() + "): " + output.strip());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not run " + command.get(0), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + command.get(0), e);
        }
    }

    @Override
    public void close() {
        try {
            thawReplication();
        } catch (RuntimeException gone) {
            // the sender exited: nothing to thaw
        }
        for (String node : List.of("replica", "primary")) {
            try {
                pgCtl(base.resolve(node), "stop", "-m", "immediate");
            } catch (IllegalStateException alreadyDown) {
                // crashed or never started
            }
        }
        try (Stream<Path> files = Files.walk(base)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory
        }
    }
}
