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
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A merchant id with no refunds (a typo: {@code nc1} for {@code nc_1}) is its own outcome, found
 * before any lease or key is made; a merchant whose refunds are all finished exits 0 and says so.
 * The first assertion on each path is the control: the seeded merchant does settle, under the
 * same options.
 */
class NoRefundsCliTest {
    private static final String DB = TestDatabases.postgresUrl();
    private static final String REDIS = TestRedis.uri();

    @Test
    void aMerchantWithoutRefundsIsNamedAndLeavesNoKey() throws Exception {
        String merchant = "nc_" + UUID.randomUUID().toString().substring(0, 8);
        String typo = merchant.replace("_", "");
        assertThat(CliRun.of("seed", "--merchant", merchant, "--refunds", "3", "--total", "3.00", "--db-url", DB).exit()).isZero();
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build());
             RedisClient client = RedisClient.create(REDIS); StatefulRedisConnection<String, String> redis = client.connect()) {
            CliRun settled = settle(merchant, gateway.url());
            assertThat(settled.exit()).as(settled.both()).isZero();

            CliRun mistyped = settle(typo, gateway.url());
            assertThat(mistyped.exit()).as(mistyped.both()).isEqualTo(SettleCommand.NO_REFUNDS);
            assertThat(mistyped.oneLineError()).as(mistyped.stderr()).isTrue();
            assertThat(mistyped.stderr()).contains("merchant " + typo + " has no refunds");
            assertThat(mistyped.stdout()).doesNotContain("COMPLETED");
            String resource = Merchants.resource(typo);
            assertThat(redis.sync().exists(RedisKeys.DEFAULT.lockKey(resource), RedisKeys.DEFAULT.fenceKey(resource),
                    RedisKeys.DEFAULT.issuerKey(resource))).as("no key made for the typo").isZero();

            CliRun again = settle(merchant, gateway.url());
            assertThat(again.exit()).as(again.both()).isZero();
            assertThat(again.stdout()).contains("nothing to settle: all 3 refunds were already finished");

            CliRun enqueued = CliRun.of("enqueue", "--merchant", typo, "--db-url", DB, "--nats-url", "nats://127.0.0.1:1");
            assertThat(enqueued.exit()).as(enqueued.both()).isEqualTo(SettleCommand.NO_REFUNDS);
            assertThat(enqueued.oneLineError()).as(enqueued.stderr()).isTrue();
            assertThat(enqueued.stderr()).contains("merchant " + typo + " has no refunds").contains("nothing enqueued");
            CliRun control = CliRun.of("enqueue", "--merchant", merchant, "--db-url", DB, "--nats-url", "nats://127.0.0.1:1");
            assertThat(control.exit()).as("control: a seeded merchant gets as far as the (unreachable) broker: " + control.both()).isEqualTo(1);
        }
    }

    private static CliRun settle(String merchant, String gateway) {
        return CliRun.of("settle", "--merchant", merchant, "--ttl", "5s", "--redis-url", REDIS, "--db-url", DB, "--gateway-url", gateway);
    }
}
