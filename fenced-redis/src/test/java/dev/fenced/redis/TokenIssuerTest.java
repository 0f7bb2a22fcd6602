package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.Lease;
import dev.fenced.TokenIssuerMismatchException;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One issuer per resource: the first grant records it beside the counter, a store of another
 * issuer is refused without a lease, and a switch is deliberate: refused while a lease is live,
 * and the new issuer's first token is above every token the old one handed out.
 */
class TokenIssuerTest {
    private static DataSource db;

    @BeforeAll
    static void migrate() {
        db = TestDatabases.postgres();
        FencedSchema.migrate(db);
    }

    private static String freshResource() {
        return "issuer-" + UUID.randomUUID();
    }

    private static RedisLeaseStore store(TokenIssuer issuer) {
        RedisLeaseStore.Builder builder = RedisLeaseStore.builder(TestRedis.uri());
        return switch (issuer) {
            case REDIS -> builder.build();
            case EPOCHS -> builder.tokens(TokenPolicy.epochs(JdbcSequenceTokenSource.epochs(db))).build();
            case SOURCE -> builder.tokens(TokenPolicy.durable(JdbcSequenceTokenSource.of(db))).build();
        };
    }

    private static long token(RedisLeaseStore store, String resource) {
        try (Lease lease = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow()) {
            return lease.token();
        }
    }

    @Test
    void everyOtherIssuerIsRefusedWithoutALease() {
        for (TokenIssuer first : TokenIssuer.values()) {
            String resource = freshResource();
            try (RedisLeaseStore owner = store(first)) {
                token(owner, resource);
                assertThat(owner.inspect(resource).tokenIssuer()).isEqualTo(first.recorded());
                for (TokenIssuer other : TokenIssuer.values()) {
                    if (other == first) {
                        continue;
                    }
                    try (RedisLeaseStore intruder = store(other)) {
                        assertThatThrownBy(() -> intruder.tryAcquire(resource, Duration.ofSeconds(10)))
                                .isInstanceOf(TokenIssuerMismatchException.class)
                                .satisfies(e -> assertThat(((TokenIssuerMismatchException) e).recordedIssuer()).isEqualTo(first.recorded()));
                        assertThat(intruder.inspect(resource).holder()).as(other + " after " + first).isNull();
                    }
                }
                assertThat(token(owner, resource)).as("the owner's issuer goes on").isPositive();
            }
        }
    }

    @Test
    void aSwitchWaitsForNoLeaseAndStartsAboveEveryTokenIssued() {
        for (List<TokenIssuer> pair : List.of(List.of(TokenIssuer.EPOCHS, TokenIssuer.REDIS), List.of(TokenIssuer.REDIS, TokenIssuer.EPOCHS),
                List.of(TokenIssuer.EPOCHS, TokenIssuer.SOURCE))) {
            String resource = freshResource();
            try (RedisLeaseStore from = store(pair.get(0)); RedisLeaseStore to = store(pair.get(1))) {
                long old = token(from, resource);
                assertThat(from.inspect(resource).highestTokenIssued()).as("what Redis shows of " + pair.get(0)).isEqualTo(old);
                try (Lease live = from.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow()) {
                    assertThat(to.switchTokenIssuer(resource, live.token())).as("refused while a lease is live").isFalse();
                    assertThat(to.inspect(resource).tokenIssuer()).isEqualTo(pair.get(0).recorded());
                }
                long highest = from.inspect(resource).highestTokenIssued();
                if (pair.get(1) == TokenIssuer.SOURCE) {
                    JdbcSequenceTokenSource.of(db).raiseAbove(highest);
                } else if (pair.get(1) == TokenIssuer.EPOCHS) {
                    JdbcSequenceTokenSource.epochs(db).raiseAbove(TokenPolicy.epochOf(highest));
                }
                assertThat(to.switchTokenIssuer(resource, highest)).isTrue();
                assertThat(token(to, resource)).as(pair + ": the new issuer's first token").isGreaterThan(highest);
                assertThatThrownBy(() -> token(from, resource)).isInstanceOf(TokenIssuerMismatchException.class);
            }
        }
    }
}
