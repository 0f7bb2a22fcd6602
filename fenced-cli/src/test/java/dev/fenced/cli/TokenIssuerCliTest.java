package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.redis.RedisKeys;
import dev.fenced.settlement.Merchants;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * One token issuer per merchant, as an operator meets it: a merchant first settled with
 * {@code --tokens epochs} refuses workers started with {@code database} or {@code redis} (exit 11,
 * one line, nothing claimed), {@code status} and {@code doctor} name the mismatch, and
 * {@code fenced tokens --switch-to} hands the merchant over deliberately. The control deletes the
 * issuer Redis recorded, as before issuers were recorded: the plain counter's run is then granted
 * the lease with a token below the fences the epochs run stored (here the first row it meets
 * carries one and refuses it; {@code MixedTokenIssuersTest} shows a stale epochs holder taking a
 * row from such a live holder).
 */
class TokenIssuerCliTest {
    private static final String DB = TestDatabases.postgresUrl();
    private static final String REDIS = TestRedis.uri();
    private static final String NOWHERE = "http://127.0.0.1:1";

    private static String seeded() {
        String merchant = "tk_" + UUID.randomUUID().toString().substring(0, 8);
        CliRun seed = CliRun.of("seed", "--merchant", merchant, "--refunds", "6", "--total", "6.00", "--db-url", DB);
        assertThat(seed.exit()).as(seed.both()).isZero();
        return merchant;
    }

    private static CliRun settle(String merchant, String tokens, String gateway) {
        return CliRun.of("settle", "--merchant", merchant, "--tokens", tokens, "--ttl", "5s", "--redis-url", REDIS, "--db-url", DB,
                "--gateway-url", gateway);
    }

    /** An epochs run that reaches no gateway: it claims, puts the rows back to pending, and leaves its fences on them. */
    private static void fencedByEpochs(String merchant) throws Exception {
        CliRun epochs = settle(merchant, "epochs", NOWHERE);
        assertThat(epochs.exit()).as(epochs.both()).isEqualTo(SettleCommand.GATEWAY_UNAVAILABLE);
        assertThat(highestFence(merchant)).as("epoch tokens on the rows").isGreaterThan(1L << 24);
    }

    @Test
    void aWorkerOfAnotherIssuerIsRefusedUntilTheMerchantIsSwitched() throws Exception {
        String merchant = seeded();
        fencedByEpochs(merchant);
        long fence = highestFence(merchant);
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            for (String other : new String[] {"database", "redis"}) {
                CliRun refused = settle(merchant, other, gateway.url());
                assertThat(refused.exit()).as(refused.both()).isEqualTo(FencedCli.TOKEN_ISSUER_MISMATCH);
                assertThat(refused.oneLineError()).as(refused.stderr()).isTrue();
                assertThat(refused.stderr()).contains("come from epochs").contains("--tokens " + other)
                        .contains("fenced tokens --merchant " + merchant + " --switch-to " + other);
            }
            assertThat(highestFence(merchant)).as("nothing claimed by the refused runs").isEqualTo(fence);
            assertThat(sent(merchant)).isZero();

            CliRun status = CliRun.of("status", "--merchant", merchant, "--tokens", "database", "--redis-url", REDIS, "--db-url", DB);
            assertThat(status.exit()).as(status.both()).isZero();
            assertThat(status.stdout()).contains("tokens             epochs").contains("tokensProblem").contains("not from database");
            CliRun doctor = CliRun.of("doctor", "--tokens", "database", "--redis-url", REDIS, "--db-url", DB);
            assertThat(doctor.exit()).as(doctor.both()).isEqualTo(1);
            assertThat(doctor.stdout()).contains("tokens of " + merchant + ": tokens come from epochs");

            CliRun switched = CliRun.of("tokens", "--merchant", merchant, "--switch-to", "database", "--redis-url", REDIS, "--db-url", DB);
            assertThat(switched.exit()).as(switched.both()).isZero();
            assertThat(switched.stdout()).contains("tokens now from database (before: epochs)");
            CliRun settled = settle(merchant, "database", gateway.url());
            assertThat(settled.exit()).as(settled.both()).isZero();
            assertThat(token(settled)).as("the new issuer's token, above the epochs' fences").isGreaterThan(fence);
            assertThat(sent(merchant)).isEqualTo(6);
            assertThat(settle(merchant, "epochs", gateway.url()).exit()).as("the old issuer is refused now").isEqualTo(FencedCli.TOKEN_ISSUER_MISMATCH);
        }
    }

    @Test
    void controlWithoutTheRecordedIssuerTheOtherCounterIsGrantedATokenBelowTheStoredFence() throws Exception {
        String merchant = seeded();
        fencedByEpochs(merchant);
        long fence = highestFence(merchant);
        try (RedisClient client = RedisClient.create(REDIS); StatefulRedisConnection<String, String> redis = client.connect()) {
            redis.sync().del(RedisKeys.DEFAULT.issuerKey(Merchants.resource(merchant)));
        }
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build())) {
            CliRun unchecked = settle(merchant, "redis", gateway.url());
            assertThat(unchecked.exit()).as(unchecked.both()).isEqualTo(SettleCommand.FENCE_VIOLATION);
            assertThat(token(unchecked)).as("a lease, with a token below the fences of the epochs run").isLessThan(fence);
        }
    }

    private static long token(CliRun run) {
        Matcher token = Pattern.compile("token (\\d+)").matcher(run.stdout());
        assertThat(token.find()).as(run.stdout()).isTrue();
        return Long.parseLong(token.group(1));
    }

    private static long highestFence(String merchant) throws Exception {
        return query("SELECT MAX(fence) FROM refund WHERE merchant = ?", merchant);
    }

    private static long sent(String merchant) throws Exception {
        return query("SELECT COUNT(*) FROM refund WHERE merchant = ? AND state = 'sent'", merchant);
    }

    private static long query(String sql, String merchant) throws Exception {
        try (Connection c = DriverManager.getConnection(DB); PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
