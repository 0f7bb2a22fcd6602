package dev.fenced.lab;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.cli.FencedCli;
import dev.fenced.embedded.EmbeddedRedis;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.testing.servers.TestDatabases;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue #34: with FENCED_* exported, {@code demo} used those servers without saying so, and its
 * refusal blamed options never given. The demo runs in a process of its own, with the environment
 * each test sets and no other FENCED_* variable.
 */
class DemoServersTest {

    private record Run(int exit, String stdout, String stderr) {
    }

    private static Run demo(Map<String, String> env, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), FencedCli.class.getName(), "demo"));
        command.addAll(List.of(args));
        Path out = Files.createTempFile("demo", ".out");
        Path err = Files.createTempFile("demo", ".err");
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
            builder.environment().keySet().removeIf(name -> name.startsWith("FENCED_"));
            builder.environment().putAll(env);
            Process process = builder.start();
            if (!process.waitFor(5, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new AssertionError("the demo still runs after 5 minutes: " + Files.readString(out));
            }
            return new Run(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /**
     * A loopback port that refuses connections, held until closed: bound but not listening, and
     * without SO_REUSEADDR, so no embedded server started meanwhile can be given the same port (a
     * port freed at once was once handed to the demo's own Redis, and the test saw its own port).
     */
    private static Socket closedPort() throws IOException {
        Socket socket = new Socket();
        socket.setReuseAddress(false);
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        return socket;
    }

    @Test
    void embeddedIgnoresTheEnvironmentAndEachServerIsNamed() throws Exception {
        try (Socket held = closedPort()) {
            int closed = held.getLocalPort();
            Run run = demo(Map.of("FENCED_REDIS_URL", "redis://127.0.0.1:" + closed, "FENCED_DB_URL",
                    "jdbc:postgresql://127.0.0.1:" + closed + "/nowhere?user=postgres"), "--embedded", "--speed", "100");

            assertThat(run.exit()).as(run.stdout() + run.stderr()).isZero();
            assertThat(run.stdout()).containsPattern("\n  Redis     embedded redis-server \\d+\\.\\d+\\.\\d+ on 127\\.0\\.0\\.1:\\d+\n")
                    .containsPattern("\n  database  embedded PostgreSQL \\d+\\.\\d+ on localhost:\\d+\n")
                    .containsPattern("\n  gateway   embedded simulated gateway on 127\\.0\\.0\\.1:\\d+\n")
                    .doesNotContain(":" + closed)
                    .contains("duplicates           0");
            assertThat(run.stdout().indexOf("  gateway")).as("every server named before the story starts")
                    .isLessThan(run.stdout().indexOf("seeded m_4471"));
        }
    }

    @Test
    void givenServersAreNamedWithTheOptionOrVariableThatGaveThem() throws Exception {
        try (Socket held = closedPort()) {
            int closed = held.getLocalPort();
            Run run = demo(Map.of("FENCED_REDIS_URL", "redis://ops:hunter22@127.0.0.1:" + closed),
                    "--db-url", "jdbc:postgresql://127.0.0.1:" + closed + "/nowhere?user=postgres", "--speed", "100");

            assertThat(run.exit()).as(run.stdout() + run.stderr()).isEqualTo(FencedCli.RUNTIME_FAILURE);
            assertThat(run.stdout()).contains("  Redis     redis://127.0.0.1:" + closed + ", from FENCED_REDIS_URL\n")
                    .contains("  database  jdbc:postgresql://127.0.0.1:" + closed + "/nowhere, from --db-url\n")
                    .doesNotContain("hunter22");
            assertThat(run.stderr().strip().lines()).as(run.stderr()).hasSize(1);

            Run both = demo(Map.of(), "--embedded", "--redis-url", "redis://127.0.0.1:" + closed);
            assertThat(both.exit()).isEqualTo(FencedCli.USAGE);
            assertThat(both.stderr()).contains("--embedded").contains("--redis-url");
            assertThat(both.stdout()).isEmpty();
        }
    }

    /** A Redis that has run the story before: the refusal names the variable that chose it, and the way out. */
    @Test
    void aRefusalNamesTheEnvironmentVariableThatChoseTheServer() throws Exception {
        try (EmbeddedRedis used = EmbeddedRedis.start()) {
            try (RedisLeaseStore leases = RedisLeaseStore.builder(used.uri()).build()) {
                leases.raiseCounter(Merchants.resource(Scenario.MERCHANT), 40);
            }
            Run run = demo(Map.of("FENCED_REDIS_URL", used.uri(), "FENCED_DB_URL", TestDatabases.postgresUrl()), "--speed", "100");

            assertThat(run.exit()).as(run.stdout() + run.stderr()).isEqualTo(FencedCli.USAGE);
            assertThat(run.stderr().strip().lines()).as(run.stderr()).hasSize(1);
            assertThat(run.stderr()).contains("already at 40 in Redis from FENCED_REDIS_URL")
                    .contains("run it with --embedded, or unset FENCED_REDIS_URL").doesNotContain("--redis-url");
        }
    }
}
