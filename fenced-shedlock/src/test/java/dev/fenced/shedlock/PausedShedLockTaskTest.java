package dev.fenced.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fenced.jdbc.FencedSchema;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.testing.servers.JavaProcess;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A ShedLock task paused past its {@code lockAtMostFor}: A is a separate JVM frozen with SIGSTOP
 * after its task took the lock, until the lock expired in Redis and B, this test, ran the same task
 * under the next token. Resumed, A writes: with the fence the database refuses it (A ends
 * FENCED_OUT, nothing of it committed); the control, the same task writing without the fence,
 * commits A's stale line beside B's, which is what ShedLock alone lets happen.
 */
class PausedShedLockTaskTest {
    private static DataSource database;

    @BeforeAll
    static void schema() throws SQLException {
        database = TestDatabases.postgres();
        FencedSchema.migrate(database);
        try (Connection connection = database.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS " + ShedLockedLedger.TABLE
                    + " (id BIGSERIAL PRIMARY KEY, account TEXT NOT NULL, token BIGINT NOT NULL, amount NUMERIC(12, 2) NOT NULL)");
        }
    }

    @ParameterizedTest(name = "fenced={0}")
    @ValueSource(booleans = {true, false})
    void aTaskPausedPastLockAtMostForCannotCommit(boolean fenced) throws Throwable {
        String account = "acct_" + UUID.randomUUID().toString().substring(0, 8);
        try (JavaProcess a = JavaProcess.start(ShedLockedLedger.class,
                List.of(TestRedis.uri(), TestDatabases.postgresUrl(), account, Boolean.toString(fenced)));
             RedisLeaseStore store = RedisLeaseStore.builder(TestRedis.uri()).build()) {
            long tokenA = Long.parseLong(a.awaitLine("HOLDING ").substring("HOLDING ".length()).trim());
            a.stop();

            ShedLockedLedger b = new ShedLockedLedger(FencedLockProvider.of(store), database);
            // A's lock lives until lockAtMostFor runs out by Redis's clock, which no test can move: B runs until it is not busy.
            String outcomeB = await("A's lock expired in Redis and B's task ran").atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(100)).until(() -> b.post(account, fenced, false), o -> !o.startsWith("BUSY"));
            long tokenB = Long.parseLong(outcomeB.substring("EXECUTED ".length()));
            assertThat(tokenB).as("B took over with a newer token").isGreaterThan(tokenA);

            a.resume();
            a.tell("go");
            int exit = a.awaitExit(Duration.ofSeconds(60));
            String outcomeA = a.awaitLine("OUTCOME ");
            if (fenced) {
                assertThat(outcomeA).isEqualTo("OUTCOME FENCED_OUT " + tokenA);
                assertThat(exit).isEqualTo(3);
                assertThat(tokensPosted(account)).as("only B's line: A's stale transaction was refused").containsExactly(tokenB);
            } else {
                assertThat(outcomeA).isEqualTo("OUTCOME EXECUTED " + tokenA);
                assertThat(tokensPosted(account)).as("control: A's stale line committed beside B's").containsExactly(tokenB, tokenA);
            }
        }
    }

    private static List<Long> tokensPosted(String account) throws SQLException {
        try (Connection connection = database.getConnection();
             PreparedStatement select = connection.prepareStatement(
                     "SELECT token FROM " + ShedLockedLedger.TABLE + " WHERE account = ? ORDER BY id")) {
            select.setString(1, account);
            List<Long> tokens = new ArrayList<>();
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    tokens.add(rows.getLong(1));
                }
            }
            return tokens;
        }
    }
}
