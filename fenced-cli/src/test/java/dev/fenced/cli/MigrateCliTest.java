package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.testing.servers.OwnDatabase;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code fenced migrate} on an empty database, created by the test on the test server and dropped
 * after: before it, the commands that only read say in one line that the refund table is missing
 * and that {@code fenced migrate} creates it; after it, they run.
 */
class MigrateCliTest {

    @Test
    void onPostgresql() throws Exception {
        try (OwnDatabase own = OwnDatabase.on(TestDatabases.postgresUrl())) {
            readersAskForMigrateUntilItRuns(own.url());
        };
    }

    @Test
    void onMariadb() throws Exception {
        TestDatabases.mariadb(); // skips without a MariaDB outside CI
        try (OwnDatabase own = OwnDatabase.on(TestDatabases.mariadbUrl().orElseThrow())) {
            readersAskForMigrateUntilItRuns(own.url());
        };
    }

    @Test
    void anUnreachableDatabaseIsOneLine() {
        CliRun run = CliRun.of("migrate", "--db-url", "jdbc:postgresql://127.0.0.1:1/test?user=postgres&password=hunter2");
        assertThat(run.exit()).isEqualTo(FencedCli.RUNTIME_FAILURE);
        assertThat(run.oneLineError()).as(run.stderr()).isTrue();
        assertThat(run.stderr()).doesNotContain("hunter2");
    }

    private static void readersAskForMigrateUntilItRuns(String db) throws Exception {
        String merchant = "m_mig" + UUID.randomUUID().toString().substring(0, 8);
        String redis = TestRedis.uri();
        for (CliRun run : new CliRun[] {
                CliRun.of("status", "--merchant", merchant, "--db-url", db, "--redis-url", redis),
                CliRun.of("status", "--all", "--json", "--db-url", db, "--redis-url", redis),
                CliRun.of("reconcile", "--merchant", merchant, "--db-url", db, "--gateway-url", "http://127.0.0.1:1"),
                CliRun.of("doctor", "--redis-url=", "--db-url", db)}) {
            assertThat(run.exit()).as(run.both()).isEqualTo(FencedCli.RUNTIME_FAILURE);
            assertThat(run.oneLineError()).as(run.stderr()).isTrue();
            assertThat(run.stderr()).contains("no refund table", "fenced migrate").doesNotContain("relation", "doesn't exist");
            assertThat(run.stdout()).isEmpty();
        }

        CliRun created = CliRun.of("migrate", "--db-url", db);
        assertThat(created.exit()).as(created.both()).isZero();
        String database = db.replaceFirst("\\?.*", "");
        assertThat(created.stdout()).isEqualTo("schema of " + database
                + " created (refund, fence_counter, fence_guard, fence_token_seq, fence_epoch_seq)" + System.lineSeparator());
        CliRun again = CliRun.of("migrate", "--db-url", db);
        assertThat(again.exit()).as(again.both()).isZero();
        assertThat(again.stdout()).startsWith("schema of " + database + " is up to date (refund, ");

        CliRun doctor = CliRun.of("doctor", "--redis-url=", "--db-url", db);
        assertThat(doctor.exit()).as(doctor.both()).isZero();
        assertThat(doctor.stdout().lines()).containsExactly("fence_counter: ok", "fence_guard: ok", "refund: ok");
        CliRun status = CliRun.of("status", "--merchant", merchant, "--db-url", db, "--redis-url", redis);
        assertThat(status.exit()).as(status.both()).isZero();

        try (Connection c = DriverManager.getConnection(db); Statement s = c.createStatement()) {
            s.execute("DROP TABLE fence_counter");
        }
        CliRun noCounter = CliRun.of("doctor", "--redis-url=", "--db-url", db);
        assertThat(noCounter.exit()).isEqualTo(FencedCli.RUNTIME_FAILURE);
        assertThat(noCounter.stdout()).contains("fence_counter: no such table").contains("fenced migrate").contains("refund: ok");
    }
}
