package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.settlement.RefundSchema;
import dev.fenced.testing.servers.TestDatabases;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/** {@code fenced doctor}: fit tables say ok, each problem is a line, bad input and an unreachable database are one line. */
class DoctorCliTest {
    private static final String DB = TestDatabases.postgresUrl();

    @Test
    void aMigratedDatabaseIsFitAndAnUnfitTableIsNamed() throws Exception {
        RefundSchema.migrate(TestDatabases.postgres());
        CliRun fit = CliRun.of("doctor", "--redis-url=", "--db-url", DB);
        assertThat(fit.exit()).as(fit.both()).isZero();
        assertThat(fit.stdout().lines()).containsExactly("fence_counter: ok", "fence_guard: ok", "refund: ok");

        try (Connection c = TestDatabases.postgres().getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS doctor_nullable");
            s.execute("CREATE TABLE doctor_nullable (id VARCHAR(32) PRIMARY KEY, state VARCHAR(16) NOT NULL, fence BIGINT)");
        }
        CliRun unfit = CliRun.of("doctor", "--redis-url=", "--db-url", DB, "--table", "doctor_nullable");
        assertThat(unfit.exit()).as(unfit.both()).isEqualTo(FencedCli.RUNTIME_FAILURE);
        assertThat(unfit.stdout()).contains("doctor_nullable.fence: is nullable").contains("fence_guard: ok");
    }

    @Test
    void badInputAndAnUnreachableDatabaseAreOneLine() {
        CliRun injected = CliRun.of("doctor", "--redis-url=", "--db-url", DB, "--table", "refund; DROP TABLE refund");
        assertThat(injected.exit()).isEqualTo(FencedCli.USAGE);
        assertThat(injected.oneLineError()).as(injected.stderr()).isTrue();

        CliRun unreachable = CliRun.of("doctor", "--redis-url=", "--db-url", "jdbc:postgresql://127.0.0.1:1/test?user=postgres&password=hunter2");
        assertThat(unreachable.exit()).isEqualTo(FencedCli.RUNTIME_FAILURE);
        assertThat(unreachable.oneLineError()).as(unreachable.stderr()).isTrue();
        assertThat(unreachable.stderr()).doesNotContain("hunter2");
    }
}
