package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Assumptions;

/** Bad input: one line on stderr, exit 2 for usage and 1 for runtime failures, no stack trace. */
class CliInputTest {
    record Run(int exit, String stderr) {
    }

    @BeforeAll
    static void noConnectionEnvironment() {
        Assumptions.assumeTrue(System.getenv("FENCED_DB_URL") == null && System.getenv("FENCED_GATEWAY_URL") == null,
                "these cases check the messages for missing URLs");
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

    @Test
    void seedThenStatusAndASecondSeedOfTheSameMerchantWritesNothing() throws Exception {
        String merchant = "m_" + java.util.UUID.randomUUID().toString().substring(0, 8);
        String db = dev.fenced.testing.TestDatabases.postgresUrl();
        String redis = dev.fenced.testing.TestRedis.uri();
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

    private static void assertOneLine(Run run, int exit, String contains) {
        assertThat(run.exit()).as(run.stderr()).isEqualTo(exit);
        assertThat(run.stderr().strip().lines().count()).as(run.stderr()).isEqualTo(1);
        assertThat(run.stderr()).contains(contains).doesNotContain("\tat ").doesNotContain("Exception:");
    }

    @Test
    void seedRejectsBadNumbersBeforeTouchingAnything() {
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "0", "--total", "10", "--db-url", "jdbc:postgresql://127.0.0.1:1/x"), 2, "positive");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "3", "--total", "10.001", "--db-url", "jdbc:postgresql://127.0.0.1:1/x"), 2, "two decimals");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "5", "--total", "0.04", "--db-url", "jdbc:postgresql://127.0.0.1:1/x"), 2, "too small");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "5", "--total", "ten", "--db-url", "jdbc:postgresql://127.0.0.1:1/x"), 2, "not a decimal");
        assertOneLine(run("seed", "--merchant", "m 1", "--refunds", "5", "--total", "10"), 2, "merchant id");
        assertOneLine(run("seed", "--merchant", "", "--refunds", "5", "--total", "10"), 2, "blank");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "x", "--total", "10"), 2, "--refunds");
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "5", "--total", "10"), 2, "needs --db-url or the environment variable FENCED_DB_URL");
    }

    @Test
    void unreachableServersAreOneLineRuntimeFailuresWithoutPasswords() {
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "5", "--total", "10",
                "--db-url", "jdbc:postgresql://127.0.0.1:1/x?user=u&password=hunter2"), 1, "unreachable");
        Run redis = run("status", "--merchant", "m_1", "--redis-url", "redis://:hunter2@127.0.0.1:1",
                "--db-url", dev.fenced.testing.TestDatabases.postgresUrl());
        assertOneLine(redis, 1, "127.0.0.1:1");
        assertThat(redis.stderr()).doesNotContain("hunter2");
    }

    @Test
    void malformedUrlsAndOptionsAreUsageErrors() {
        assertOneLine(run("seed", "--merchant", "m_1", "--refunds", "5", "--total", "10", "--db-url", "postgres://x"), 2, "jdbc:postgresql:");
        assertOneLine(run("settle", "--merchant", "m_1", "--ttl", "soon"), 2, "not a duration");
        assertOneLine(run("settle", "--merchant", "m_1", "--ttl", "0s", "--redis-url", "redis://x", "--db-url", "jdbc:postgresql://x/y",
                "--gateway-url", "http://x"), 2, "TTL");
        assertOneLine(run("settle", "--merchant", "m_1", "--concurrency", "0"), 2, "--concurrency");
        assertOneLine(run("settle", "--merchant", "m_1"), 2, "needs --");
        assertOneLine(run("status", "--merchant", "m_1", "--redis-url", "http://x", "--db-url", dev.fenced.testing.TestDatabases.postgresUrl()), 2, "redis://");
        assertOneLine(run("demo", "--speed", "0"), 2, "--speed");
        assertOneLine(run("frobnicate"), 2, "frobnicate");
    }
}
