package dev.fenced.testing.servers;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** One export serves the command line and the tests: FENCED_DB_URL stands in by its scheme. */
class TestDatabasesTest {
    private static final String PG = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
    private static final String MARIADB = "jdbc:mariadb://127.0.0.1:3306/test?user=root";

    @Test
    void theCommandLinesPostgresUrlIsTheTestsPostgres() {
        Map<String, String> env = Map.of("FENCED_DB_URL", PG);
        assertThat(TestDatabases.configured(env::get, TestDatabases.PG_ENV, "jdbc:postgresql:")).contains(PG);
        assertThat(TestDatabases.configured(env::get, TestDatabases.MARIADB_ENV, "jdbc:mariadb:")).isEmpty();
    }

    @Test
    void theCommandLinesMariaDbUrlIsTheTestsMariaDb() {
        Map<String, String> env = Map.of("FENCED_DB_URL", MARIADB);
        assertThat(TestDatabases.configured(env::get, TestDatabases.MARIADB_ENV, "jdbc:mariadb:")).contains(MARIADB);
        assertThat(TestDatabases.configured(env::get, TestDatabases.PG_ENV, "jdbc:postgresql:")).isEmpty();
    }

    @Test
    void theSpecificVariableWins() {
        String other = "jdbc:postgresql://127.0.0.1:5432/other?user=postgres";
        Map<String, String> env = Map.of("FENCED_PG_URL", other, "FENCED_DB_URL", PG);
        assertThat(TestDatabases.configured(env::get, TestDatabases.PG_ENV, "jdbc:postgresql:")).contains(other);
    }

    @Test
    void nothingSetIsNothingConfigured() {
        Map<String, String> env = Map.of("FENCED_PG_URL", " ");
        assertThat(TestDatabases.configured(env::get, TestDatabases.PG_ENV, "jdbc:postgresql:")).isEmpty();
    }
}
