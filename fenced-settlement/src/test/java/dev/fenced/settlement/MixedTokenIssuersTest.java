package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.FenceViolation;
import dev.fenced.Lease;
import dev.fenced.TokenIssuerMismatchException;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.math.BigDecimal;
import java.sql.Connection;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Tokens of different issuers do not order: an epoch token (epoch &lt;&lt; 24) is above every token of
 * Redis's plain counter, whichever was granted later. A merchant settled with epochs and then by a
 * worker on the plain counter is the story: the stale epochs holder, woken after its lease
 * expired, takes the row the live holder claimed, and the live holder's confirm is refused. The
 * issuer recorded beside the counter refuses the second worker's lease instead; the control is the
 * same story with that record deleted before the grant, as it was before issuers were recorded.
 */
class MixedTokenIssuersTest {
    private static DataSource db;
    private static final FencedRows REFUNDS = FencedRows.of(RefundSchema.table());

    @BeforeAll
    static void migrate() {
        db = TestDatabases.postgres();
        RefundSchema.migrate(db);
        FencedSchema.migrate(db);
    }

    private static RedisLeaseStore epochs() {
        return RedisLeaseStore.builder(TestRedis.uri()).tokens(TokenPolicy.epochs(JdbcSequenceTokenSource.epochs(db))).build();
    }

    private static RedisLeaseStore plainCounter() {
        return RedisLeaseStore.builder(TestRedis.uri()).tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(db, RefundSchema.table(), Merchants::merchantOf)))
                .build();
    }

    @Test
    void aHolderOfAnotherIssuerIsRefusedItsLease() {
        String merchant = "mix_" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(db, merchant, merchant + "_r", 3, new BigDecimal("3.00"), "EUR");
        String resource = Merchants.resource(merchant);
        try (RedisLeaseStore epochs = epochs(); RedisLeaseStore counter = plainCounter()) {
            Lease stale = epochs.tryAcquire(resource, Duration.ofMillis(200)).orElseThrow();
            stale.release(); // as if it expired under a paused holder: the holder still carries its token
            assertThatThrownBy(() -> counter.tryAcquire(resource, Duration.ofSeconds(10)))
                    .isInstanceOf(TokenIssuerMismatchException.class)
                    .hasMessageContaining("come from epochs").hasMessageContaining("from redis");
            assertThat(counter.inspect(resource).holder()).as("no lease taken").isNull();
            assertThat(counter.inspect(resource).tokenIssuer()).isEqualTo("epochs");
        }
    }

    @Test
    void withoutTheRecordTheStaleHolderOfTheHigherIssuerWinsTheFence() throws Exception {
        String merchant = "mix_" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(db, merchant, merchant + "_r", 3, new BigDecimal("3.00"), "EUR");
        String resource = Merchants.resource(merchant);
        String row = merchant + "_r001";
        try (RedisLeaseStore epochs = epochs(); RedisLeaseStore counter = plainCounter();
             RedisClient client = RedisClient.create(TestRedis.uri()); StatefulRedisConnection<String, String> redis = client.connect();
             Connection c = db.getConnection()) {
            Lease stale = epochs.tryAcquire(resource, Duration.ofMillis(200)).orElseThrow();
            stale.release();
            redis.sync().del(counter.keys().issuerKey(resource)); // the control: no issuer recorded
            Lease live = counter.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            assertThat(live.token()).as("the plain counter goes on from the epoch's counter").isLessThan(stale.token());
            REFUNDS.claim(c, row, live.token());
            REFUNDS.claim(c, row, stale.token()); // the stale holder wakes and takes the live holder's row
            assertThatThrownBy(() -> REFUNDS.confirm(c, row, live.token())).isInstanceOf(FenceViolation.class);
            REFUNDS.confirm(c, row, stale.token());
            live.release();
        }
    }
}
