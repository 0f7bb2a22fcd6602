package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The command line's side of the money failure model: exit codes of {@code settle} under an outage
 * and under refusals, and {@code reconcile} with and without {@code --repair}, against a real
 * Redis, PostgreSQL and gateway. Connections are passed as options, so the environment never
 * changes what runs.
 */
class MoneyCliTest {
    private static final String DB = TestDatabases.postgresUrl();
    private static final String REDIS = TestRedis.uri();

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    private static String seed(int refunds, String total) {
        String merchant = "m_" + UUID.randomUUID().toString().substring(0, 8);
        CliRun seeded = run("seed", "--merchant", merchant, "--refunds", Integer.toString(refunds), "--total", total, "--id-prefix", merchant + "_r",
                "--db-url", DB);
        assertThat(seeded.exit()).as(seeded.stderr()).isZero();
        return merchant;
    }

    private static CliRun settle(String merchant, String gatewayUrl) {
        return run("settle", "--merchant", merchant, "--concurrency", "2", "--redis-url", REDIS, "--db-url", DB, "--gateway-url", gatewayUrl);
    }

    /**
     * {@code poll} asks for the provider's final word on sent refunds: refunds that failed after
     * acceptance come back as returned (exit 7, named), the rest settled. Control: a provider whose
     * refunds all succeed settles every row and exits 0.
     */
    @ParameterizedTest(name = "refunds fail after acceptance: {0}")
    @ValueSource(booleans = {true, false})
    void pollReportsRefundsReturnedAfterAcceptance(boolean failLate) throws Exception {
        String merchant = seed(3, "30.00");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO)
                .lifecycle(Duration.ZERO, failLate ? 1.0 : 0.0).build())) {
            assertThat(settle(merchant, gateway.url()).exit()).isZero();
            CliRun poll = run("poll", "--merchant", merchant, "--quiet-for", "0s", "--db-url", DB, "--gateway-url", gateway.url());
            assertThat(poll.exit()).as(poll.stdout() + poll.stderr()).isEqualTo(failLate ? SettleCommand.REJECTED : 0);
            assertThat(poll.stdout()).contains("3 checked").contains(failLate ? "3 returned (" + merchant + "_r001" : "3 settled");
            assertThat(states(merchant)).containsExactly(Map.entry(failLate ? "returned" : "settled", 3L));
        }
    }

    /**
     * A key retention margin that the default retries (3 attempts and a lookup of at most 5 s each,
     * backoffs and the longest Retry-After honoured) could outlast is refused before a refund is touched: one line, exit 2, every row still
     * pending, nothing sent. Control: a margin of 40 s with one attempt of at most 2 s (2 x 2 s + 30 s
     * of Retry-After) settles, so {@code --gateway-attempts} and {@code --gateway-timeout} reach the check.
     */
    @Test
    void aKeyRetentionMarginTheRetriesCouldOutlastIsAUsageError() throws Exception {
        String merchant = seed(2, "20.00");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            CliRun refused = run("settle", "--merchant", merchant, "--redis-url", REDIS, "--db-url", DB, "--gateway-url", gateway.url(),
                    "--gateway-key-retention", "10m", "--key-retention-margin", "10s");
            assertThat(refused.exit()).as(refused.stdout() + refused.stderr()).isEqualTo(2);
            assertThat(refused.stderr().strip().lines()).singleElement().asString()
                    .contains("may take up to PT1M50.3S").contains("key retention margin PT10S").doesNotContain("Exception");
            assertThat(states(merchant)).containsExactly(Map.entry("pending", 2L));
            assertThat(gateway.ledger()).isEmpty();

            CliRun control = run("settle", "--merchant", merchant, "--redis-url", REDIS, "--db-url", DB, "--gateway-url", gateway.url(),
                    "--gateway-key-retention", "10m", "--key-retention-margin", "40s", "--gateway-attempts", "1", "--gateway-timeout", "2s");
            assertThat(control.exit()).as(control.stdout() + control.stderr()).isZero();
            assertThat(states(merchant)).containsExactly(Map.entry("sent", 2L));
        }
    }

    /**
     * Nothing listens at the gateway's address: exit 6, and every refund still pending, none failed.
     * The next run against a gateway pays each once and exits 0. Control: a gateway that refuses
     * every refund makes the same run exit 7 with every row failed, so the assertions see failures
     * when there are any.
     */
    @Test
    void anUnreachableGatewayExits6AndFailsNothingWhileRefusalsExit7() throws Exception {
        String merchant = seed(8, "80.00");
        CliRun outage = settle(merchant, "http://user:s3cret@127.0.0.1:1");
        assertThat(outage.exit()).as(outage.stdout() + outage.stderr()).isEqualTo(SettleCommand.GATEWAY_UNAVAILABLE);
        assertThat(outage.stdout()).contains("GATEWAY_UNAVAILABLE").contains("0 failed").doesNotContain("s3cret");
        assertThat(states(merchant)).containsExactly(Map.entry("pending", 8L));
        assertThat(failureReasons(merchant)).isZero();

        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            CliRun next = settle(merchant, gateway.url());
            assertThat(next.exit()).as(next.stdout() + next.stderr()).isZero();
            assertThat(states(merchant)).containsExactly(Map.entry("sent", 8L));
            List<GatewayRefund> paid = gateway.ledger().stream().filter(r -> r.merchant().equals(merchant)).toList();
            assertThat(paid).hasSize(8);
            assertThat(paid.stream().map(GatewayRefund::idempotencyKey).distinct()).hasSize(8);
        }

        String refused = seed(4, "40.00");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).refuseAbove(new BigDecimal("5.00"))
                .build())) {
            CliRun control = settle(refused, gateway.url());
            assertThat(control.exit()).as("control: " + control.stdout()).isEqualTo(SettleCommand.REJECTED);
            assertThat(states(refused)).containsExactly(Map.entry("failed", 4L));
            assertThat(failureReasons(refused)).isEqualTo(4);
            CliRun again = settle(refused, gateway.url());
            assertThat(again.exit()).as("nothing left to settle: " + again.both()).isZero();
            assertThat(again.stdout()).contains("all 4 refunds were already finished, 4 of them failed (see fenced reconcile)");
        }
    }

    /**
     * Quiet by default; {@code --verbose} logs each decision on stderr, one line each, with the
     * resource and the token: the lease taken, the run's outcome, a refusal by the gateway.
     */
    @Test
    void verboseLogsTheDecisionsAndTheDefaultIsQuiet() {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).refuseAbove(new BigDecimal("5.00"))
                .build())) {
            String quiet = seed(2, "8.00");
            CliRun plain = run("settle", "--quiet", "--merchant", quiet, "--redis-url", REDIS, "--db-url", DB, "--gateway-url", gateway.url());
            assertThat(plain.exit()).as(plain.both()).isZero();
            assertThat(plain.stderr()).as("no log line, and --quiet: no progress").isEmpty();

            String loud = seed(2, "20.00");
            CliRun verbose = run("settle", "--verbose", "--merchant", loud, "--redis-url", REDIS, "--db-url", DB, "--gateway-url", gateway.url());
            assertThat(verbose.exit()).as(verbose.both()).isEqualTo(SettleCommand.REJECTED);
            String resource = "settle:" + loud;
            assertThat(verbose.stderr().lines().filter(line -> line.contains("SettlementWorker:")))
                    .anyMatch(line -> line.contains(" INFO ") && line.contains("acquired " + resource))
                    .anyMatch(line -> line.contains(" WARN ") && line.contains("failed " + resource + " " + loud + "_r001"))
                    .anyMatch(line -> line.contains(" INFO ") && line.contains("outcome " + resource) && line.contains("REJECTED"));
            assertThat(verbose.stderr()).doesNotContain("\tat ");
        }
    }

    /**
     * Without a terminal, settle reports its progress on stderr at a steady interval, one line
     * each, counting up to the refunds it found to settle; stdout keeps only the result. With
     * {@code --quiet}, and with {@code --events}, there is none.
     */
    @Test
    void settleReportsProgressLinesWithoutATerminal() {
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ofMillis(60)).build())) {
            String merchant = seed(30, "300.00");
            CliRun run = run("settle", "--merchant", merchant, "--progress-every", "250ms", "--redis-url", REDIS, "--db-url", DB,
                    "--gateway-url", gateway.url());
            assertThat(run.exit()).as(run.both()).isZero();
            java.util.regex.Pattern line = java.util.regex.Pattern.compile(
                    "settle " + merchant + ": (\\d+)/30 refunds \\((\\d+) %\\), \\d+\\.\\d/s(, about \\d+ s left)?");
            List<Long> counts = run.stderr().lines().map(line::matcher).filter(java.util.regex.Matcher::matches)
                    .map(m -> Long.parseLong(m.group(1))).toList();
            assertThat(counts).as(run.stderr()).hasSizeGreaterThanOrEqualTo(2).isSorted();
            java.util.regex.Pattern last = java.util.regex.Pattern.compile("settle " + merchant + ": 30/30 refunds in \\d+\\.\\d s");
            assertThat(run.stderr().lines()).as("nothing but progress lines, and the last one when it ends")
                    .allMatch(l -> line.matcher(l).matches() || last.matcher(l).matches());
            assertThat(run.stderr().strip().lines().reduce((a, b) -> b).orElseThrow()).matches(last);
            assertThat(run.stdout()).doesNotContain("refunds (");

            String quiet = seed(30, "300.00");
            CliRun silent = run("settle", "--quiet", "--merchant", quiet, "--progress-every", "250ms", "--redis-url", REDIS, "--db-url", DB,
                    "--gateway-url", gateway.url());
            assertThat(silent.exit()).isZero();
            assertThat(silent.stderr()).isEmpty();

            String evented = seed(30, "300.00");
            CliRun events = run("settle", "--events", "--merchant", evented, "--progress-every", "250ms", "--redis-url", REDIS, "--db-url", DB,
                    "--gateway-url", gateway.url());
            assertThat(events.exit()).isZero();
            assertThat(events.stderr()).isEmpty();
            assertThat(events.stdout().lines()).allMatch(l -> l.startsWith("{"));
        }
    }

    /**
     * A refund the gateway holds while its row says failed: reconcile reports it and exits 8; the
     * repair marks it sent under a fresh token; a second check agrees and exits 0. A row failed
     * without a refund goes back to pending only with --retry-failed, and the next settle pays it.
     */
    @Test
    void reconcileReportsRepairsAndAgrees() throws Exception {
        String merchant = seed(3, "30.00");
        String paidButFailed = merchant + "_r001";
        String failedUnpaid = merchant + "_r002";
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            GatewayClient client = GatewayClient.of(gateway.url(), Duration.ofSeconds(5));
            client.createRefund(key(paidButFailed), paidButFailed, merchant, amount(paidButFailed), "EUR");
            update("UPDATE refund SET state = 'failed', fence = 1 WHERE id IN (?, ?)", paidButFailed, failedUnpaid);

            CliRun check = run("reconcile", "--merchant", merchant, "--json", "--db-url", DB, "--gateway-url", gateway.url());
            assertThat(check.exit()).as(check.stderr()).isEqualTo(ReconcileCommand.DISCREPANCIES);
            JsonNode report = new ObjectMapper().readTree(check.stdout());
            assertThat(report.get("discrepancies")).hasSize(1);
            assertThat(report.get("discrepancies").get(0).get("kind").asText()).isEqualTo("FAILED_BUT_PAID");
            assertThat(report.get("failed").get(0).asText()).isEqualTo(failedUnpaid);
            assertThat(states(merchant)).as("a check writes nothing").containsEntry("failed", 2L);

            CliRun repair = run("reconcile", "--merchant", merchant, "--repair", "--retry-failed", "--redis-url", REDIS, "--db-url", DB,
                    "--gateway-url", gateway.url());
            assertThat(repair.exit()).as(repair.stdout() + repair.stderr()).isZero();
            assertThat(repair.stdout()).contains("failed-but-paid").contains("repaired: sent");
            assertThat(states(merchant)).containsExactly(Map.entry("pending", 2L), Map.entry("sent", 1L));

            assertThat(settle(merchant, gateway.url()).exit()).isZero();
            CliRun agrees = run("reconcile", "--merchant", merchant, "--db-url", DB, "--gateway-url", gateway.url());
            assertThat(agrees.exit()).as(agrees.stdout()).isZero();
            assertThat(agrees.stdout()).contains("0 discrepancies");
            assertThat(gateway.ledger().stream().filter(r -> r.merchant().equals(merchant))).hasSize(3);
        }
        CliRun usage = run("reconcile", "--merchant", merchant, "--retry-failed", "--db-url", DB, "--gateway-url", "http://127.0.0.1:1");
        assertThat(usage.exit()).isEqualTo(FencedCli.USAGE);
        assertThat(usage.stderr().strip().lines()).hasSize(1);
        CliRun resendAlone = run("reconcile", "--merchant", merchant, "--resend-expired", "--db-url", DB, "--gateway-url", "http://127.0.0.1:1");
        assertThat(resendAlone.exit()).isEqualTo(FencedCli.USAGE);
        assertThat(resendAlone.stderr().strip().lines()).singleElement().asString().contains("--resend-expired goes with --repair");
        CliRun returnedAlone = run("reconcile", "--merchant", merchant, "--resend-returned", "--db-url", DB, "--gateway-url", "http://127.0.0.1:1");
        assertThat(returnedAlone.exit()).isEqualTo(FencedCli.USAGE);
        assertThat(returnedAlone.stderr().strip().lines()).singleElement().asString().contains("--resend-returned goes with --repair");
        CliRun badMargin = run("reconcile", "--merchant", merchant, "--gateway-key-retention", "1h", "--key-retention-margin", "2h",
                "--db-url", DB, "--gateway-url", "http://127.0.0.1:1");
        assertThat(badMargin.exit()).isEqualTo(FencedCli.USAGE);
        assertThat(badMargin.stderr().strip().lines()).singleElement().asString().contains("less than the key retention");
    }

    /**
     * A row with the key an upgrade left it (its refund id) sent on a refund another deployment
     * sharing the gateway made under that key, with the same merchant and amount: reconcile reports
     * it as a foreign refund and exits 8, with and without --repair, and leaves the row alone.
     * Control: the same refund naming no owner, as every refund was made before, is taken as the
     * row's: exit 0.
     */
    @Test
    void aRefundAnotherDeploymentMadeUnderARowsKeyIsReportedAndExits8() throws Exception {
        for (boolean control : new boolean[] {false, true}) {
            String merchant = seed(1, "70.25");
            String id = merchant + "_r001";
            try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
                Map<String, String> owner = control ? Map.of() : Map.of("deployment", "d_elsewhere", "merchant", merchant, "refund", id);
                GatewayRefund refund = GatewayClient.of(gateway.url(), Duration.ofSeconds(5))
                        .createRefund(id, id, merchant, amount(id), "EUR", owner);
                update("UPDATE refund SET idempotency_key = id, state = 'sent', fence = 1, gateway_reference = ? WHERE id = ?", refund.id(), id);

                CliRun check = run("reconcile", "--merchant", merchant, "--db-url", DB, "--gateway-url", gateway.url());
                if (control) {
                    assertThat(check.exit()).as("control: " + check.stdout()).isZero();
                    assertThat(check.stdout()).contains("0 discrepancies");
                    continue;
                }
                assertThat(check.exit()).as(check.stdout() + check.stderr()).isEqualTo(ReconcileCommand.DISCREPANCIES);
                assertThat(check.stdout()).contains("foreign-refund", id, refund.id(), "d_elsewhere");
                CliRun repair = run("reconcile", "--merchant", merchant, "--repair", "--redis-url", REDIS, "--db-url", DB,
                        "--gateway-url", gateway.url());
                assertThat(repair.exit()).as(repair.stdout() + repair.stderr()).isEqualTo(ReconcileCommand.DISCREPANCIES);
                assertThat(repair.stdout()).contains("foreign-refund").doesNotContain("repaired:");
                assertThat(states(merchant)).containsExactly(Map.entry("sent", 1L));
            }
        }
    }

    /**
     * A refund the gateway refused stays failed without a refund: settle exits 7, status says the
     * row needs an operator (for the merchant and on the board), and reconcile exits 8 while it is
     * there, though nothing disagrees with the gateway. Control: once the repair puts it back to
     * pending (--retry-failed), reconcile exits 0.
     */
    @Test
    void aFailedRowWithoutARefundKeepsReconcileFromExiting0() throws Exception {
        // "0..." sorts before every other test's merchants: on the board's first page however many the shared database holds.
        String merchant = "0_f" + UUID.randomUUID().toString().substring(0, 8);
        CliRun seeded = run("seed", "--merchant", merchant, "--refunds", "2", "--total", "20.00", "--db-url", DB, "--quiet");
        assertThat(seeded.exit()).as(seeded.both()).isZero();
        String refused = merchant + "_r002";
        update("UPDATE refund SET amount = 500.00 WHERE id = ?", refused);
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).refuseAbove(new BigDecimal("100.00"))
                .build())) {
            assertThat(settle(merchant, gateway.url()).exit()).isEqualTo(SettleCommand.REJECTED);
            assertThat(states(merchant)).containsExactly(Map.entry("failed", 1L), Map.entry("sent", 1L));

            CliRun status = run("status", "--merchant", merchant, "--db-url", DB, "--redis-url", REDIS);
            assertThat(status.exit()).as(status.both()).isZero();
            assertThat(status.stdout()).containsPattern("failed +1 refunds not paid: they need an operator \\(fenced reconcile --merchant "
                    + merchant + "\\)");
            CliRun board = run("status", "--all", "--limit", "1000", "--db-url", DB, "--redis-url", REDIS);
            assertThat(board.stdout()).contains("need an operator").contains(merchant + " (1)");

            CliRun check = run("reconcile", "--merchant", merchant, "--db-url", DB, "--gateway-url", gateway.url());
            assertThat(check.exit()).as(check.both()).isEqualTo(ReconcileCommand.DISCREPANCIES);
            assertThat(check.stdout()).contains("0 discrepancies").contains("1 failed without a refund at the gateway: not paid, they need an operator");

            CliRun retried = run("reconcile", "--merchant", merchant, "--repair", "--retry-failed", "--redis-url", REDIS, "--db-url", DB,
                    "--gateway-url", gateway.url());
            assertThat(retried.exit()).as("control: " + retried.both()).isZero();
            assertThat(states(merchant)).containsExactly(Map.entry("pending", 1L), Map.entry("sent", 1L));
        }
    }

    /**
     * Another session holds r_001 locked in an open transaction (a holder stalled inside it) while
     * the gateway holds r_001's refund: {@code reconcile --repair} (TTL 3 s, so a 1 s lock wait)
     * gives up its fenced write after the bound, exits 15 with one line naming the wait, releases
     * the lease and writes nothing. Control: with every database bound off it is still running after
     * three times the bound, and repairs the row once the lock is released.
     */
    @ParameterizedTest(name = "lock wait bounded: {0}")
    @ValueSource(booleans = {true, false})
    void reconcileBehindAStalledHoldersRowLockExits15InOneLine(boolean bounded) throws Exception {
        String merchant = seed(2, "20.00");
        String paid = merchant + "_r001";
        long bound = 1_000;
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build());
             Connection stalled = DriverManager.getConnection(DB);
             RedisLeaseStore leases = RedisLeaseStore.builder(REDIS).build()) {
            GatewayClient.of(gateway.url(), Duration.ofSeconds(5)).createRefund(key(paid), paid, merchant, amount(paid), "EUR");
            stalled.setAutoCommit(false);
            try (PreparedStatement lock = stalled.prepareStatement("SELECT state FROM refund WHERE id = ? FOR UPDATE")) {
                lock.setString(1, paid);
                lock.executeQuery().close();
            }
            List<String> args = new ArrayList<>(List.of("reconcile", "--merchant", merchant, "--repair", "--ttl", "3s",
                    "--redis-url", REDIS, "--db-url", DB, "--gateway-url", gateway.url()));
            if (!bounded) {
                args.addAll(List.of("--lock-timeout", "0s", "--statement-timeout", "0s", "--db-socket-timeout", "0s"));
            }
            long start = System.nanoTime();
            CompletableFuture<CliRun> repair = CompletableFuture.supplyAsync(() -> CliRun.of(args));
            if (!bounded) {
                assertThat(repair).as("control: still waiting after three times the bound").failsWithin(Duration.ofMillis(3 * bound))
                        .withThrowableOfType(TimeoutException.class);
                stalled.rollback();
                CliRun done = repair.get(2, TimeUnit.MINUTES);
                assertThat(done.exit()).as(done.both()).isZero();
                assertThat(states(merchant)).containsEntry("sent", 1L);
                return;
            }
            CliRun gaveUp = repair.get(2, TimeUnit.MINUTES);
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(gaveUp.exit()).as(gaveUp.both()).isEqualTo(FencedCli.DATABASE_WAIT);
            assertThat(gaveUp.oneLineError()).as(gaveUp.stderr()).isTrue();
            assertThat(gaveUp.stderr()).startsWith("fenced reconcile: ").contains("claim of refund row " + paid,
                    "gave up waiting for a row lock held by another session");
            assertThat(took).as("within three times the bound, the JVM's warm start included").isLessThan(3 * bound + 2_000);
            assertThat(leases.inspect("settle:" + merchant).holder()).as("the repair's lease released").isNull();
            stalled.rollback();
            assertThat(states(merchant)).as("nothing written").containsExactly(Map.entry("pending", 2L));
        }
    }

    @Test
    void seedTotalsOutOfRangeAreUsageErrorsBeforeConnecting() {
        for (String total : new String[] {"1e999999999", "99999999999999999999", "20000000000.00"}) {
            CliRun run = run("seed", "--merchant", "m_1", "--refunds", "1", "--total", total, "--db-url", "jdbc:postgresql://127.0.0.1:1/x");
            assertThat(run.exit()).as(total + ": " + run.stderr()).isEqualTo(FencedCli.USAGE);
            assertThat(run.stderr().strip().lines()).as(run.stderr()).hasSize(1);
            assertThat(run.stderr()).doesNotContain("unreachable");
        }
    }

    private static Map<String, Long> states(String merchant) throws Exception {
        Map<String, Long> out = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(DB);
             PreparedStatement s = c.prepareStatement("SELECT state, COUNT(*) FROM refund WHERE merchant = ? GROUP BY state")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getLong(2));
                }
            }
        }
        return out;
    }

    private static long failureReasons(String merchant) throws Exception {
        try (Connection c = DriverManager.getConnection(DB);
             PreparedStatement s = c.prepareStatement("SELECT COUNT(*) FROM refund WHERE merchant = ? AND failure_reason IS NOT NULL")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static String key(String id) throws Exception {
        return column(id, "idempotency_key");
    }

    private static BigDecimal amount(String id) throws Exception {
        return new BigDecimal(column(id, "amount"));
    }

    private static String column(String id, String column) throws Exception {
        try (Connection c = DriverManager.getConnection(DB); PreparedStatement s = c.prepareStatement("SELECT " + column + " FROM refund WHERE id = ?")) {
            s.setString(1, id);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private static void update(String sql, String... ids) throws Exception {
        try (Connection c = DriverManager.getConnection(DB); PreparedStatement s = c.prepareStatement(sql)) {
            for (int i = 0; i < ids.length; i++) {
                s.setString(i + 1, ids[i]);
            }
            s.executeUpdate();
        }
    }
}
