package dev.fenced.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.InMemoryLeaseStore;
import dev.fenced.Lease;
import dev.fenced.LeaseStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The in-memory store passes the same contract as the Redis store. */
class InMemoryLeaseStoreTest extends LeaseStoreContract {
    private final InMemoryLeaseStore store = new InMemoryLeaseStore();

    @Override
    protected LeaseStore store() {
        return store;
    }

    @Override
    protected void expireLeaseBehindItsBack(String resource) {
        store.expire(resource);
    }

    @Override
    protected Duration timeLeft(String resource) {
        return store.timeLeft(resource);
    }

    /** With a clock of its own, a test moves time instead of waiting for it. */
    @Test
    void leasesExpireByTheGivenClock() {
        AtomicLong now = new AtomicLong(1_000_000);
        Clock clock = new Clock() {
            @Override
            public ZoneOffset getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return Instant.ofEpochMilli(now.get());
            }
        };
        InMemoryLeaseStore timed = new InMemoryLeaseStore(clock);
        Lease first = timed.tryAcquire("settle:m_1", Duration.ofSeconds(30)).orElseThrow();
        now.addAndGet(29_999);
        assertThat(timed.tryAcquire("settle:m_1", Duration.ofSeconds(30))).isEmpty();
        now.addAndGet(1);
        Lease second = timed.tryAcquire("settle:m_1", Duration.ofSeconds(30)).orElseThrow();
        assertThat(second.token()).isGreaterThan(first.token());
        assertThat(first.isHeld()).isFalse();
        assertThat(first.release()).as("a stale release changes nothing").isFalse();
        assertThat(second.isHeld()).isTrue();
        timed.observeStoredFence("settle:m_1", 40);
        assertThat(second.release()).isTrue();
        assertThat(timed.tryAcquire("settle:m_1", Duration.ofSeconds(30)).orElseThrow().token()).as("raised past a stored fence").isEqualTo(41);
    }
}
