package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Bad input: one line on stderr, exit 2 for usage and 1 for runtime failures, no stack trace. Never
 * skipped: the cases about a missing URL run in a JVM without the {@code FENCED_*} variables.
 */
class CliInputTest {
    record Run(int exit, String stderr) {
    }

    /** A run in a JVM of its own without any {@code FENCED_*} variable: the cases about missing URLs run whatever the environment. */
    private static Run runWithoutEnvironment(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), FencedCli.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        builder.environment().keySet().removeIf(name -> name.startsWith("FENCED_"));
        Process process = builder.start();
        String stderr = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Run(process.exitValue(), stderr);
    }

    private static Run run(String... args) {
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            int exit = FencedCli.run(args);
            return new Run(exit, captured.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(original);
        }
    }

    private static String stdout(String... args) {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            assertThat(FencedCli.run(args)).isZero();
            return captured.toString(StandardCharsets.UTF_8);
        } finally {
            System.setOut(original);
        }
    }

    /** The operator's command line carries none of the lab's commands: they live in fenced-lab. */
    @Test
    void theLabsCommandsAreNotOnTheOperatorsCommandLine() {
        for (String lab : List.of("demo", "compare", "chaos", "lab-settle", "lab-worker")) {
            CliRun run = CliRun.of(lab);
            assertThat(run.exit()).as(lab).isEqualTo(FencedCli.USAGE);
            assertThat(run.stderr()).as(lab).startsWith("fenced: unknown command '" + lab + "'");
        }
        assertThat(CliRun.of("settle", "--merchant", "m_1", "--no-fence").stderr()).contains("unknown option '--no-fence'");
    }

    @Test
    void seedThenStatusAndASecondSeedOfTheSameMerchantWritesNothing() throws Exception {
        String merchant = "m_" + java.util.UUID.randomUUID().toString().substring(0, 8);
        String db = dev.fenced.testing.servers.TestDatabases.postgresUrl();
        String redis = dev.fenced.testing.servers.TestRedis.uri();
        assertThat(stdout("seed", "--merchant", merchant, "--refunds", "12", "--total", "843.00", "--id-prefix", merchant + "_r",
                "--db-url", db)).contains("seeded " + merchant + ": 12 refunds, 843.00 EUR");
        assertOneLine(run("seed", "--merchant", merchant, "--refunds", "5", "--total", "10", "--id-prefix", merchant + "_x",
                "--db-url", db), 2, "already has 12 refunds");
        com.fasterxml.jackson.databind.JsonNode status = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                stdout("status", "--merchant", merchant, "--json", "--db-url", db, "--redis-url", redis));
        assertThat(status.get("rowsByState").get("pending").asInt()).isEqualTo(12);
        assertThat(status.get("totalAmount").asText()).isEqualTo("843.00");
        assertThat(status.get("highestFence").asLong()).isZero();
        assertThat(status.get("leaseHolder").isNull()).isTrue();
    }

    /** A total in a currency with three decimals is seeded and shown exactly; one with none, without decimals. */
    @Test
    void seedKeepsEachCurrencysDecimals() throws Exception {
        String db = dev.fenced.testing.servers.TestDatabases.postgresUrl();
        String kwd = "m_" + java.util.UUID.randomUUID().toString().substring(0, 8);
        assertThat(stdout("seed", "--merchant", kwd, "--refunds", "4", "--total", "10.005", "--currency", "KWD", "--db-url", db))
                .contains("seeded " + kwd + ": 4 refunds, 10.005 KWD");
        String jpy = "m_" + java.util.UUID.randomUUID().toString().substring(0, 8);
        assertThat(stdout("seed", "--merchant", jpy, "--refunds", "3", "--total", "1000", "--currency", "JPY", "--db-url", db))
                .contains("seeded " + jpy + ": 3 refunds, 1000 JPY");
        com.fasterxml.jackson.databind.JsonNode status = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                stdout("status", "--merchant", kwd, "--json", "--db-url", db, "--redis-url", dev.fenced.testing.servers.TestRedis.uri()));
        assertThat(status.get("totalAmount").asText()).isEqualTo("10.005");
    }

    private static void assertOneLine(Run run, int exit, String contains) {
        assertThat(run.exit()).as(run.stderr()).isEqualTo(exit);
        assertThat(run.stderr().strip().lines().count()).as(run.stderr()).isEqualTo(1);
        assertThat(run.stderr()).contains(contains).doesNotContain("\tat ").doesNotContain("Exception:");
    }

    @Test
    void seedRejectsBadNumbersBeforeTouchingAnything() throws Exception {
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "0", "--total", "10", "--db-url", "jdbc:postgresql://127.0.0.1:1/x"), 2, "positive");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "3", "--total", "10.001", "--db-url", "jdbc:postgresql://127.0.0.1:1/x"), 2, "two decimals");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "5", "--total", "0.04", "--db-url", "jdbc:postgresql://127.0.0.1:1/x"), 2, "too small");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "1", "--total", "1.50", "--currency", "JPY",
                "--db-url", "jdbc:postgresql://127.0.0.1:1/x"), 2, "total 1.50 JPY has decimals, and JPY has none");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "1", "--total", "1.2345", "--currency", "KWD",
                "--db-url", "jdbc:postgresql://127.0.0.1:1/x"), 2, "more than three decimals");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "1", "--total", "1", "--currency", "XAU",
                "--db-url", "jdbc:postgresql://127.0.0.1:1/x"), 2, "no minor units");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "1", "--total", "1", "--currency", "EURO",
                "--db-url", "jdbc:postgresql://127.0.0.1:1/x"), 2, "not an ISO 4217");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "5", "--total", "ten", "--db-url", "jdbc:postgresql://127.0.0.1:1/x"), 2, "not a decimal");
        assertOneLine(run("seed", "--merchant", "m 1", "--refunds", "5", "--total", "10"), 2, "merchant id");
        assertOneLine(run("seed", "--merchant", "", "--refunds", "5", "--total", "10"), 2, "blank");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "x", "--total", "10"), 2, "--refunds");
        assertOneLine(runWithoutEnvironment("seed", "--merchant", "m_1", "--refunds", "5", "--total", "10"), 2,
                "needs --db-url or the environment variable FENCED_DB_URL");
    }

    @Test
    void unreachableServersAreOneLineRuntimeFailuresWithoutPasswords() {
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "5", "--total", "10",
                "--db-url", "jdbc:postgresql://127.0.0.1:1/x?user=u&password=hunter2"), 1, "unreachable");
        Run redis = run("tokens", "--merchant", "m_1", "--redis-url", "redis://:hunter2@127.0.0.1:1",
                "--db-url", dev.fenced.testing.servers.TestDatabases.postgresUrl());
        assertOneLine(redis, 1, "127.0.0.1:1");
        assertThat(redis.stderr()).doesNotContain("hunter2");
    }

    /** An unknown option is named, with picocli's suggestion, even when a required option is missing too: one line, exit 2. */
    @Test
    void anUnknownOptionIsNamedBeforeAMissingOne() {
        assertOneLine(run("settle", "--merchnt", "x"), 2, "fenced settle: unknown option '--merchnt'; did you mean --merchant? (see --help)");
        assertOneLine(run("status", "--merchant", "m_1", "--al"), 2, "fenced status: unknown option '--al'; did you mean --all?");
        assertOneLine(run("--frobnicate"), 2, "fenced: unknown option '--frobnicate' (see --help)");
        for (String command : List.of("seed", "gateway", "settle", "worker", "enqueue", "status", "reconcile", "doctor", "timeline")) {
            assertOneLine(run(command, "--frobnicate"), 2, "fenced " + command + ": unknown option '--frobnicate'");
        }
    }

    /** No command is a usage error with the usage on stderr; asking for help or the version is not. */
    @Test
    void noCommandIsAUsageErrorButHelpAndVersionAreNot() {
        CliRun none = CliRun.of();
        assertThat(none.exit()).isEqualTo(FencedCli.USAGE);
        assertThat(none.stderr()).startsWith("Usage: fenced").contains("Commands:");
        assertThat(none.stdout()).isEmpty();
        CliRun help = CliRun.of("--help");
        assertThat(help.exit()).isZero();
        assertThat(help.stdout()).startsWith("Usage: fenced");
        CliRun version = CliRun.of("--version");
        assertThat(version.exit()).isZero();
        assertThat(version.stdout()).contains("fenced " + FencedCli.VERSION);
    }

    /** A duration in a message reads as it is written on the command line, never as PT0S. */
    @Test
    void durationsInMessagesReadAsTheyAreWritten() {
        String db = dev.fenced.testing.servers.TestDatabases.postgresUrl();
        assertOneLine(run("settle", "--merchant", "m_1", "--ttl", "0s"), 2, "TTL must be at least 1 ms, got 0s");
        assertOneLine(run("settle", "--merchant", "m_1", "--ttl", "25h"), 2, "TTL 25h is over the limit of one day");
        assertOneLine(run("status", "--all", "--watch", "50ms", "--db-url", db), 2, "--watch must be at least 100ms, got 50ms");
        assertOneLine(run("worker", "--ack-wait", "100ms"), 2, "ackWait must be 500ms to 1h, got 100ms");
        assertOneLine(run("worker", "--drain-time", "10ms"), 2, "--drain-time must be 100ms to 1h, got 10ms");
        String merchant = "m_" + java.util.UUID.randomUUID().toString().substring(0, 8);
        assertOneLine(run("seed", "--merchant", merchant, "--refunds", "1", "--total", "1.00", "--progress-every", "0s", "--db-url", db), 2,
                "--progress-every must be positive, got 0s");
    }

    /** The everyday local URL, whose password is also its user's name: only the password is masked, and the scheme stays readable. */
    @Test
    void anOrdinaryPasswordIsMaskedWhereItStandsAndNowhereElse() {
        String url = "jdbc:postgresql://127.0.0.1:1/test?user=postgres&password=postgres";
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "1", "--total", "1.00", "--db-url", url), 1,
                "database at jdbc:postgresql://127.0.0.1:1/test is unreachable");
        Run echoed = run("seed", "--merchant", "m_1", "--refunds", "1", "--total", "1.00", "--db-url", url, url);
        assertOneLine(echoed, 2, "'jdbc:postgresql://127.0.0.1:1/test?user=postgres&password=***'");
        assertThat(echoed.stderr()).doesNotContain("password=postgres");
    }

    /** The database wait bounds are checked against each other and the TTL before anything connects. */
    @Test
    void databaseWaitBoundsThatCannotWorkAreUsageErrors() {
        assertOneLine(run("settle", "--merchant", "m_1", "--ttl", "3s", "--lock-timeout", "3s"), 2, "--lock-timeout (3s) must be below --ttl (3s)");
        assertOneLine(run("settle", "--merchant", "m_1", "--lock-timeout", "2s", "--statement-timeout", "1s"), 2,
                "--lock-timeout (2s) must be below --statement-timeout (1s)");
        assertOneLine(run("worker", "--lock-timeout", "1s", "--statement-timeout", "5s", "--db-socket-timeout", "5s"), 2,
                "--statement-timeout (5s) must be below --db-socket-timeout (5s)");
        assertOneLine(run("reconcile", "--merchant", "m_1", "--lock-timeout", "soon"), 2, "not a duration");
    }

    @Test
    void malformedUrlsAndOptionsAreUsageErrors() throws Exception {
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "5", "--total", "10", "--db-url", "postgres://x"), 2, "jdbc:postgresql:");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "5", "--total", "10", "--db-url", "jdbc:mysql://127.0.0.1:3306/test?user=root"), 2,
                "MySQL is not supported (MariaDB's URL scheme is jdbc:mariadb:): the database URL must start with jdbc:postgresql:// (PostgreSQL)"
                        + " or jdbc:mariadb:// (MariaDB)");
        assertOneLine(run("status", "--merchant", "m_1", "--db-url", "jdbc:sqlserver://127.0.0.1:1433"), 2,
                "database URL must start with jdbc:postgresql:// (PostgreSQL) or jdbc:mariadb:// (MariaDB), got jdbc:sqlserver://127.0.0.1:1433");
        assertOneLine(run("settle", "--merchant", "m_1", "--ttl", "soon"), 2, "not a duration");
        assertOneLine(run("settle", "--merchant", "m_1", "--ttl", "0s", "--redis-url", "redis://x", "--db-url", "jdbc:postgresql://x/y",
                "--gateway-url", "http://x"), 2, "TTL");
        assertOneLine(run("settle", "--merchant", "m_1", "--concurrency", "0"), 2, "--concurrency must be 1 to 256, got 0");
        assertOneLine(run("worker", "--concurrency", "257"), 2, "--concurrency must be 1 to 256, got 257");
        assertOneLine(run("worker", "--jobs", "65"), 2, "--jobs must be 1 to 64, got 65");
        assertOneLine(run("settle", "--merchant", "m_1", "--gateway-attempts", "0"), 2, "--gateway-attempts must be 1 to 20, got 0");
        assertOneLine(run("worker", "--gateway-timeout", "10ms"), 2, "--gateway-timeout must be 100ms to 5m, got 10ms");
        assertOneLine(runWithoutEnvironment("settle", "--merchant", "m_1"), 2, "needs --");
        assertOneLine(run("status", "--merchant", "m_1", "--redis-url", "http://x", "--db-url", dev.fenced.testing.servers.TestDatabases.postgresUrl()), 2, "redis://");
        assertOneLine(run("settle", "--merchant", "m_1", "--tokens", "wall-clock", "--redis-url", "redis://x", "--db-url",
                "jdbc:postgresql://x/y", "--gateway-url", "http://x"), 2, "must be redis, epochs or database, got wall-clock");
        assertOneLine(run("frobnicate"), 2, "frobnicate");
        assertOneLine(run("frobnicate", "--help"), 2, "unknown command 'frobnicate'");
        assertOneLine(run("settle", "--merchant", "m_1", "--ttl", "1ms", "--redis-url", "redis://x", "--db-url", "jdbc:postgresql://x/y",
                "--gateway-url", "http://x"), 2, "at least 100ms");
        Run topLevel = run("--frobnicate");
        assertThat(topLevel.stderr()).startsWith("fenced: ").doesNotContain("fenced fenced");
        Run redisHint = run("status", "--merchant", "m_1", "--redis-url", "redis://:pw@", "--db-url", dev.fenced.testing.servers.TestDatabases.postgresUrl());
        assertOneLine(redisHint, 2, "expected redis://[user:password@]host");
        assertOneLine(run("status", "--merchant", "m_1", "--redis-url", "redis-sentinel://127.0.0.1:6379", "--db-url",
                dev.fenced.testing.servers.TestDatabases.postgresUrl()), 2, "expected redis-sentinel://[password@]host:port[,host:port]#master");
    }

    /** An id taken by another merchant past the first one: one line, exit 2, and not one row of the seed written. */
    @Test
    void anIdCollisionPastTheFirstIdIsAUsageErrorAndWritesNothing() throws Exception {
        String db = dev.fenced.testing.servers.TestDatabases.postgresUrl();
        String prefix = "z" + java.util.UUID.randomUUID().toString().substring(0, 8) + "_";
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(db); java.sql.PreparedStatement s = c.prepareStatement(
                "INSERT INTO refund (id, merchant, seq, amount, currency) VALUES (?, ?, 1, 1.00, 'EUR')")) {
            s.setString(1, prefix + "002");
            s.setString(2, "m_other_" + prefix);
            s.executeUpdate();
        }
        String merchant = "m_" + prefix;
        assertOneLine(run("seed", "--merchant", merchant, "--refunds", "3", "--total", "3.00", "--id-prefix", prefix, "--db-url", db), 2,
                "collide");
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(db); java.sql.PreparedStatement s = c.prepareStatement(
                "SELECT COUNT(*) FROM refund WHERE merchant = ?")) {
            s.setString(1, merchant);
            try (java.sql.ResultSet rs = s.executeQuery()) {
                rs.next();
                assertThat(rs.getLong(1)).isZero();
            }
        }
    }

    /**
     * status reads and never writes: a database user that may only read can look, and a database
     * without fenced's tables is left without them. Control: seed, which writes, is refused for that user.
     */
    @Test
    void statusNeverWritesAndWorksForAReadOnlyUser() throws Exception {
        String admin = dev.fenced.testing.servers.TestDatabases.postgresUrl();
        String merchant = "m_" + java.util.UUID.randomUUID().toString().substring(0, 8);
        assertThat(stdout("seed", "--merchant", merchant, "--refunds", "3", "--total", "3.00", "--db-url", admin)).contains("seeded");
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(admin); java.sql.Statement s = c.createStatement()) {
            s.execute("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fenced_reader') THEN CREATE ROLE fenced_reader LOGIN; END IF; END $$");
            s.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO fenced_reader");
        }
        String reader = admin.replaceFirst("user=[^&]*", "user=fenced_reader");
        org.junit.jupiter.api.Assumptions.assumeTrue(reader.contains("user=fenced_reader"), "the test database URL names its user");
        String status = stdout("status", "--merchant", merchant, "--json", "--db-url", reader, "--redis-url", dev.fenced.testing.servers.TestRedis.uri());
        assertThat(status).contains("\"pending\" : 3");
        Run seed = run("seed", "--merchant", merchant + "x", "--refunds", "1", "--total", "1.00", "--db-url", reader);
        assertThat(seed.exit()).as("control: the reader cannot write").isNotZero();
        assertThat(seed.stderr().strip().lines()).hasSize(1);
    }
}
