package net.javacrumbs.shedlock.support;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.LeaseView;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.shedlock.FencedLockProvider;
import dev.fenced.shedlock.FencedShedLock;
import dev.fenced.testing.ManualScheduler;
import dev.fenced.testing.servers.TestRedis;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's {@link KeepAliveLockProvider} over the fenced provider: each keep-alive extension renews
 * the same lease, so the task's token stays the one its writes carry. In ShedLock's package for the
 * constructor that takes a shorter minimum than 30 s; its scheduler is a manual one, so the
 * extensions run when the test moves time, and the lease's remaining time is read from Redis.
 */
class FencedKeepAliveTest {

    @Test
    void keepAliveExtensionsRenewTheSameLeaseAndToken() {
        ManualScheduler scheduler = new ManualScheduler();
        try (RedisLeaseStore store = RedisLeaseStore.builder(TestRedis.uri()).build()) {
            FencedLockProvider fenced = FencedLockProvider.builder(store).prefix("keepalive:").build();
            KeepAliveLockProvider keepAlive = new KeepAliveLockProvider(fenced, scheduler, Duration.ofMillis(100));
            String name = UUID.randomUUID().toString();
            SimpleLock lock = keepAlive.lock(new LockConfiguration(Instant.now(), name, Duration.ofSeconds(2), Duration.ZERO)).orElseThrow();
            long token = FencedShedLock.token();
            String resource = fenced.resourceOf(name);

            // Cut the lease down to 300 ms by Redis's clock: only the keep-alive's extension can put it back to 2 s.
            assertThat(FencedShedLock.current().orElseThrow().renew(Duration.ofMillis(300))).isTrue();
            LeaseView before = store.view(resource);
            assertThat(before.timeLeft()).isLessThanOrEqualTo(Duration.ofMillis(300));
            assertThat(scheduler.advance(Duration.ofSeconds(1))).as("one keep-alive extension ran").isEqualTo(1);
            LeaseView after = store.view(resource);
            assertThat(after.holder()).isEqualTo(before.holder());
            assertThat(after.highestTokenIssued()).as("no new token").isEqualTo(token);
            assertThat(after.timeLeft()).as("renewed to lockAtMostFor").isGreaterThan(Duration.ofMillis(1500));
            assertThat(FencedShedLock.token()).as("the task's token after the extension").isEqualTo(token);

            lock.unlock();
            assertThat(store.view(resource).held()).isFalse();
            assertThat(FencedShedLock.current()).isEmpty();
        }
    }
}
