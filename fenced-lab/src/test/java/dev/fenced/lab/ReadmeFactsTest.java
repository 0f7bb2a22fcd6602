package dev.fenced.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.SoftAssertions.assertSoftly;

import dev.fenced.embedded.EmbeddedPostgresServer;
import dev.fenced.embedded.EmbeddedRedis;
import dev.fenced.testing.servers.TestDatabases;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The versions and sizes the README states are the ones measured here: the embedded servers'
 * versions as they report them, the libraries' as on the class path (Spring's, which this module
 * does not use, as the parent pom names them), the operator's jar as built. The CI servers' versions
 * describe the CI machine, so they are checked only in CI ({@code CI=true}), on the servers it names.
 */
class ReadmeFactsTest {
    private static final Path ROOT = Path.of("..");
    private static final Pattern VERSION = Pattern.compile("\\d+(?:\\.\\d+)+");
    /** Actual: what was measured; expected: what the README says. */
    private static final String MEASURED = "%s, as measured (actual) against the README (expected)";

    @Test
    void theEmbeddedRedisIsTheVersionStated() {
        try (EmbeddedRedis redis = EmbeddedRedis.start()) {
            assertThat(redisVersion(redis.uri())).as(MEASURED, "the embedded redis-server").isEqualTo(stated("Redis", "embedded"));
        }
    }

    @Test
    void theEmbeddedPostgresIsTheVersionStated() throws SQLException {
        try (EmbeddedPostgresServer postgres = EmbeddedPostgresServer.start()) {
            assertThat(firstValue(postgres.jdbcUrl(), "SHOW server_version")).as(MEASURED, "the embedded PostgreSQL")
                    .isEqualTo(stated("PostgreSQL", "embedded"));
        }
    }

    @Test
    void theLibrariesAreTheVersionsStated() throws IOException {
        String row = row("Lettuce / Flyway / Spring");
        String pom = Files.readString(ROOT.resolve("pom.xml"));
        String lettuce = classPathVersion("io.lettuce", "lettuce-core");
        String netty = classPathVersion("io.netty", "netty-common");
        String flyway = classPathVersion("org.flywaydb", "flyway-core");
        assertSoftly(soft -> {
            soft.assertThat(lettuce).as(MEASURED, "Lettuce on the class path").isEqualTo(after(row, "Lettuce"));
            soft.assertThat(netty).as(MEASURED, "Netty on the class path").isEqualTo(after(row, "Netty"));
            soft.assertThat(flyway).as(MEASURED, "Flyway on the class path").isEqualTo(after(row, "Flyway"));
            soft.assertThat(property(pom, "spring.version")).as(MEASURED, "Spring Framework in the parent pom")
                    .isEqualTo(after(row, "Spring Framework"));
            soft.assertThat(property(pom, "spring-boot.version")).as(MEASURED, "Spring Boot in the parent pom")
                    .isEqualTo(after(row, "Spring Boot"));
        });
    }

    /** "N MB" is the jar's size in millions of bytes, rounded. */
    @Test
    void theOperatorsJarIsTheSizeStated() throws IOException {
        Path jar = ROOT.resolve("fenced-cli/target/fenced.jar");
        Assumptions.assumeTrue(Files.isRegularFile(jar),
                "fenced-cli/target/fenced.jar is not built (mvn -B -DskipTests package -pl fenced-cli -am): its size is not checked");
        Matcher stated = Pattern.compile("`fenced-cli/target/fenced\\.jar`, (\\d+) MB").matcher(readme());
        assertThat(stated.find()).as("the README states the operator's jar's size").isTrue();
        long bytes = Files.size(jar);
        assertThat(Math.round(bytes / 1e6)).as(MEASURED, String.format("fenced.jar's MB (%,d bytes)", bytes))
                .isEqualTo(Long.parseLong(stated.group(1)));
    }

    @Test
    void theCiServersAreTheVersionsStated() throws Exception {
        Assumptions.assumeTrue("true".equalsIgnoreCase(System.getenv("CI")), "the CI versions are checked in CI only (CI=true)");
        Runtime.Version version = Runtime.version();
        String java = version.feature() + "." + version.interim() + "." + version.update();
        String redisUrl = System.getenv("FENCED_REDIS_URL");
        String natsUrl = System.getenv("FENCED_NATS_URL");
        assertThat(redisUrl).as("FENCED_REDIS_URL in CI").isNotBlank();
        assertThat(natsUrl).as("FENCED_NATS_URL in CI").isNotBlank();
        String redis = redisVersion(redisUrl);
        String postgres = firstValue(TestDatabases.configuredPostgresUrl().orElseThrow(() -> new AssertionError("no PostgreSQL URL in CI")),
                "SHOW server_version");
        String mariadb = firstValue(TestDatabases.mariadbUrl().orElseThrow(() -> new AssertionError("no MariaDB URL in CI")),
                "SELECT VERSION()");
        String nats = natsVersion(URI.create(natsUrl));
        assertSoftly(soft -> {
            soft.assertThat(java).as(MEASURED, "this JVM").isEqualTo(stated("Java", "OpenJDK, CI"));
            soft.assertThat(redis).as(MEASURED, "FENCED_REDIS_URL's server").isEqualTo(stated("Redis", "CI"));
            soft.assertThat(postgres).as(MEASURED, "the CI PostgreSQL").isEqualTo(stated("PostgreSQL", "CI"));
            soft.assertThat(mariadb).as(MEASURED, "the CI MariaDB").isEqualTo(stated("MariaDB", "CI"));
            soft.assertThat(nats).as(MEASURED, "FENCED_NATS_URL's server").isEqualTo(stated("NATS", "CI"));
        });
    }

    private static String readme() {
        try {
            return Files.readString(ROOT.resolve("README.md"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The Compatibility table's cell for {@code name}. */
    private static String row(String name) {
        String prefix = "| " + name + " | ";
        return readme().lines().filter(line -> line.startsWith(prefix)).findFirst()
                .map(line -> line.substring(prefix.length()))
                .orElseThrow(() -> new AssertionError("the README's Compatibility table has no row " + name));
    }

    /** The version written just before "(where" in {@code name}'s row, e.g. "14.22 (embedded)". */
    private static String stated(String name, String where) {
        return version(row(name), Pattern.compile("(\\S+) \\(" + Pattern.quote(where)));
    }

    /** The version written just after {@code name} in a row, e.g. "Flyway 13.12.2". */
    private static String after(String row, String name) {
        return version(row, Pattern.compile(Pattern.quote(name) + " (\\S+)"));
    }

    private static String version(String text, Pattern around) {
        Matcher m = around.matcher(text);
        assertThat(m.find()).as("a version matching %s in: %s", around, text).isTrue();
        return leadingVersion(m.group(1));
    }

    /** "7.7.0.RELEASE" is 7.7.0, "15.20 (Debian 15.20-0+deb12u1)" is 15.20, "10.11.19-MariaDB-0+deb12u1" is 10.11.19. */
    private static String leadingVersion(String reported) {
        Matcher m = VERSION.matcher(reported);
        assertThat(m.lookingAt()).as("a version at the start of %s", reported).isTrue();
        return m.group();
    }

    private static String classPathVersion(String group, String artifact) throws IOException {
        String resource = "META-INF/maven/" + group + "/" + artifact + "/pom.properties";
        try (InputStream in = ReadmeFactsTest.class.getClassLoader().getResourceAsStream(resource)) {
            assertThat(in).as("%s on the class path", resource).isNotNull();
            Properties properties = new Properties();
            properties.load(in);
            return leadingVersion(properties.getProperty("version"));
        }
    }

    private static String property(String pom, String name) {
        Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</").matcher(pom);
        assertThat(m.find()).as("<%s> in the parent pom", name).isTrue();
        return leadingVersion(m.group(1));
    }

    private static String redisVersion(String uri) {
        RedisClient client = RedisClient.create(uri);
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            return connection.sync().info("server").lines().filter(line -> line.startsWith("redis_version:"))
                    .map(line -> leadingVersion(line.substring("redis_version:".length()))).findFirst()
                    .orElseThrow(() -> new AssertionError("INFO server without redis_version"));
        } finally {
            client.shutdown();
        }
    }

    private static String firstValue(String jdbcUrl, String query) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(query)) {
            assertThat(rs.next()).isTrue();
            return leadingVersion(rs.getString(1));
        }
    }

    /** A NATS server introduces itself: its first line is INFO with its version. */
    private static String natsVersion(URI url) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(url.getHost(), url.getPort() == -1 ? 4222 : url.getPort()), 5_000);
            socket.setSoTimeout(5_000);
            String info = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8)).readLine();
            Matcher m = Pattern.compile("\"version\":\"([^\"]+)\"").matcher(info == null ? "" : info);
            assertThat(m.find()).as("a version in the NATS server's INFO: %s", info).isTrue();
            return leadingVersion(m.group(1));
        }
    }
}
