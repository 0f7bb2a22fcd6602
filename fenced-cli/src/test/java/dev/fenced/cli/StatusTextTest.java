package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.settlement.RefundSchema;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** {@code status} as text never prints Java's "null": a merchant without lease, counter or rows reads "none" and "-". */
class StatusTextTest {
    private static final String DB = TestDatabases.postgresUrl();
    private static final String REDIS = TestRedis.uri();

    @Test
    void aMerchantWithNoLeaseNoCounterAndNoRowsPrintsNoNull() throws Exception {
        RefundSchema.migrate(TestDatabases.postgres());
        String merchant = "m_none" + UUID.randomUUID().toString().substring(0, 8);
        CliRun text = CliRun.of("status", "--merchant", merchant, "--db-url", DB, "--redis-url", REDIS);
        assertThat(text.exit()).as(text.both()).isZero();
        assertThat(text.stdout()).doesNotContain("null").containsPattern("leaseHolder +none\\R").containsPattern("counter +none\\R");

        CliRun json = CliRun.of("status", "--merchant", merchant, "--json", "--db-url", DB, "--redis-url", REDIS);
        assertThat(json.stdout()).as("JSON keeps its null").contains("\"leaseHolder\" : null", "\"counter\" : null");
    }

    @Test
    void theBoardShowsAFreeLeaseAndNoCounterAsDashes() {
        // "0..." sorts before every other test's merchants: on the first page however many the shared database holds.
        String merchant = "0_n" + UUID.randomUUID().toString().substring(0, 8);
        CliRun seeded = CliRun.of("seed", "--merchant", merchant, "--refunds", "2", "--total", "20.00", "--db-url", DB, "--quiet");
        assertThat(seeded.exit()).as(seeded.both()).isZero();
        CliRun board = CliRun.of("status", "--all", "--db-url", DB, "--redis-url", REDIS);
        assertThat(board.exit()).as(board.both()).isZero();
        assertThat(board.stdout()).doesNotContain("null").containsPattern(merchant + " +- +- +- +2 ");
    }

    /** The provider's final word has its own columns: settled and returned rows are not counted as sent, and returned ones are named. */
    @Test
    void theBoardCountsSettledAndReturnedRowsApartFromSent() throws Exception {
        String merchant = "0_f" + UUID.randomUUID().toString().substring(0, 8);
        CliRun seeded = CliRun.of("seed", "--merchant", merchant, "--refunds", "4", "--total", "40.00", "--db-url", DB, "--quiet");
        assertThat(seeded.exit()).as(seeded.both()).isZero();
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(DB); java.sql.PreparedStatement s = c.prepareStatement(
                "UPDATE refund SET state = CASE WHEN seq = 1 THEN 'sent' WHEN seq = 2 THEN 'settled' ELSE 'returned' END WHERE merchant = ?")) {
            s.setString(1, merchant);
            assertThat(s.executeUpdate()).isEqualTo(4);
        }
        CliRun board = CliRun.of("status", "--all", "--db-url", DB, "--redis-url", REDIS);
        assertThat(board.exit()).as(board.both()).isZero();
        assertThat(board.stdout()).containsPattern(merchant + " +- +- +- +0 +0 +1 +1 +2 +0 +0\\R")
                .contains("refunds returned by the provider on this page").contains(merchant + " (2)");
        CliRun json = CliRun.of("status", "--all", "--json", "--db-url", DB, "--redis-url", REDIS);
        com.fasterxml.jackson.databind.JsonNode row = null;
        for (com.fasterxml.jackson.databind.JsonNode each : new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.stdout()).get("rows")) {
            if (each.get("merchant").asText().equals(merchant)) {
                row = each;
            }
        }
        assertThat(row).isNotNull();
        assertThat(row.get("sent").asInt()).isEqualTo(1);
        assertThat(row.get("settled").asInt()).isEqualTo(1);
        assertThat(row.get("returned").asInt()).isEqualTo(2);
    }
}
