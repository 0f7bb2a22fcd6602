package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Passwords drawn from a hostile alphabet ({@code / @ & ; : % space quote}, unicode), in every URL
 * form the command line takes (password parameter, user-info, raw or percent-encoded; database,
 * Redis and gateway), never appear on stdout or stderr, in events, or in the database. The
 * database is the real one (its trust authentication ignores the password), so the commands get
 * as far as they can; Redis and the gateway are the real one or an unreachable port.
 */
class SecretsNeverLeakProperties {
    private static final String DB = TestDatabases.postgresUrl();
    private static final String REDIS = TestRedis.uri();

    @Provide
    Arbitrary<String> passwords() {
        return Arbitraries.strings().withChars("/@&;:% '\"#?").withChars("abcXYZ019").withChars("é密ü")
                .ofMinLength(6).ofMaxLength(16)
                .filter(p -> p.chars().anyMatch(c -> "/@&;:% '\"".indexOf(c) >= 0))
                .filter(p -> !p.isBlank() && p.strip().length() >= 4);
    }

    private static String withParam(String url, String name, String value) {
        return url + (url.contains("?") ? "&" : "?") + name + "=" + value;
    }

    private static String encoded(String password) {
        return URLEncoder.encode(password, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * A command whose Redis and gateway URLs carry the password and cannot be reached: one line, no password; and
     * {@code status}, which shows the rows and says the lease is unknown, names Redis without the password either.
     */
    @Property(tries = 15)
    void unreachableServersNeverPrintThePassword(@ForAll("passwords") String password) {
        for (String redis : new String[] {"redis://:" + password + "@127.0.0.1:1", "redis://app:" + encoded(password) + "@127.0.0.1:1",
                "rediss://app:" + password + "@127.0.0.1:1/0"}) {
            CliRun run = CliRun.of("tokens", "--merchant", "m_leak", "--db-url", DB, "--redis-url", redis);
            assertThat(run.exit()).as(run.stderr()).isIn(1, 2);
            assertThat(run.oneLineError()).as(run.stderr()).isTrue();
            assertNoSecret(run.both(), password);
            CliRun status = CliRun.of("status", "--merchant", "m_leak", "--db-url", DB, "--redis-url", redis);
            assertThat(status.exit()).as(status.both()).isIn(0, 2);
            assertNoSecret(status.both(), password);
        }
        for (String db : new String[] {"jdbc:postgresql://postgres:" + password + "@127.0.0.1:1/x",
                "jdbc:mariadb://root:" + password + "@127.0.0.1:1/x", withParam("jdbc:postgresql://127.0.0.1:1/x?user=u", "password", password)}) {
            CliRun run = CliRun.of("seed", "--merchant", "m_leak", "--refunds", "1", "--total", "1.00", "--db-url", db);
            assertThat(run.exit()).as(run.stderr()).isIn(1, 2);
            assertThat(run.oneLineError()).as(run.stderr()).isTrue();
            assertNoSecret(run.both(), password);
        }
    }

    /**
     * A whole seed and settle with the password in the database URL and in the gateway URL (which
     * refuses connections): the run's events and report, and every column of the merchant's rows,
     * hold no trace of it.
     */
    @Property(tries = 8)
    void eventsAndRowsNeverHoldThePassword(@ForAll("passwords") String password) throws Exception {
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        String db = withParam(DB, "password", encoded(password));
        String gateway = "http://operator:" + encoded(password) + "@127.0.0.1:1";
        CliRun seeded = CliRun.of("seed", "--merchant", merchant, "--refunds", "2", "--total", "2.00", "--db-url", db);
        assertThat(seeded.exit()).as(seeded.both()).isZero();
        CliRun settled = CliRun.of("settle", "--merchant", merchant, "--events", "--ttl", "5s", "--redis-url", REDIS, "--db-url", db,
                "--gateway-url", gateway);
        assertThat(settled.exit()).as(settled.both()).isEqualTo(SettleCommand.GATEWAY_UNAVAILABLE);
        assertThat(settled.stdout()).contains("\"type\":\"left\"");
        assertNoSecret(seeded.both() + settled.both(), password);
        try (Connection c = DriverManager.getConnection(DB); PreparedStatement s = c.prepareStatement("SELECT * FROM refund WHERE merchant = ?")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                        assertNoSecret(String.valueOf(rs.getString(i)), password);
                    }
                }
            }
        }
    }

    /**
     * The control: the drivers and the pool do repeat the password of such a URL in their own
     * messages, so the property above is not true by accident.
     */
    @org.junit.jupiter.api.Test
    void theDriversThemselvesRepeatThePassword() {
        String password = "s3cret/@word";
        // The pool names the whole URL when no driver takes it; MariaDB's driver repeats the password up to its '/'.
        for (String url : new String[] {"jdbc:postgresql://postgres:" + password + "@127.0.0.1:1/x",
                "jdbc:mariadb://root:" + password + "@127.0.0.1:1/x"}) {
            com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
            config.setJdbcUrl(url);
            config.setInitializationFailTimeout(1);
            StringBuilder messages = new StringBuilder();
            try (com.zaxxer.hikari.HikariDataSource ignored = new com.zaxxer.hikari.HikariDataSource(config)) {
                messages.append("connected");
            } catch (RuntimeException e) {
                for (Throwable t = e; t != null; t = t.getCause()) {
                    messages.append(t.getMessage()).append('\n');
                }
            }
            assertThat(messages.toString()).as("an unscrubbed message names the password").contains("s3cret");
            CliRun run = CliRun.of("seed", "--merchant", "m_leak", "--refunds", "1", "--total", "1.00", "--db-url", url);
            assertNoSecret(run.both(), password);
        }
    }

    private static void assertNoSecret(String text, String password) {
        assertThat(text).doesNotContain(password).doesNotContain(encoded(password)).doesNotContain(password.strip());
        for (String piece : password.split("[/@:?#&;=\\s]+")) {
            if (piece.length() >= 4) {
                assertThat(text).as("a piece of the password").doesNotContain(piece);
            }
        }
    }
}
