package dev.fenced.testing;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.FenceFloor;
import dev.fenced.TokenSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The token source and fence floor contracts fail sources and floors broken on purpose: their negative controls. */
class SpiContractSelfTest {

    /** Increments without a lock: concurrent callers can read the same value. */
    private static final class RacyCounter implements TokenSource {
        private final Map<String, Long> counters = new ConcurrentHashMap<>();

        @Override
        public long nextToken(String resource) {
            long next = counters.getOrDefault(resource, 0L) + 1;
            Thread.yield();
            counters.put(resource, next);
            return next;
        }
    }

    @Test
    void aRacyCounterFailsTheConcurrencyCheck() {
        RacyCounter racy = new RacyCounter();
        TokenSourceContract contract = new TokenSourceContract() {
            @Override
            protected TokenSource source() {
                return racy;
            }

            @Override
            protected TokenSource reopened() {
                return racy;
            }
        };
        assertThatThrownBy(contract::eightThreadsNeverGetTheSameToken).isInstanceOf(AssertionError.class);
    }

    @Test
    void aCounterKeptInMemoryFailsTheRestartCheck() {
        AtomicLong[] shared = {new AtomicLong()};
        TokenSourceContract contract = new TokenSourceContract() {
            @Override
            protected TokenSource source() {
                return resource -> shared[0].incrementAndGet();
            }

            @Override
            protected TokenSource reopened() {
                AtomicLong restarted = new AtomicLong(); // the process came back with nothing
                return resource -> restarted.incrementAndGet();
            }
        };
        assertThatThrownBy(contract::aNewInstanceContinuesAboveEveryTokenIssued).isInstanceOf(AssertionError.class);
    }

    /** Answers the last fence stored, not the highest, and for every resource at once. */
    @Test
    void aFloorThatIsNotTheMaximumOfItsScopeFailsTheContract() {
        List<Long> stored = new ArrayList<>();
        FenceFloorContract contract = new FenceFloorContract() {
            @Override
            protected FenceFloor floor() {
                return resource -> stored.isEmpty() ? 0 : stored.get(stored.size() - 1);
            }

            @Override
            protected void store(String resource, long fence) {
                stored.add(fence);
            }
        };
        assertThatThrownBy(contract::theHighestFenceStoredForTheResourceWhateverTheOrder).isInstanceOf(AssertionError.class);
        assertThatThrownBy(contract::fencesOfAnotherResourceDoNotCount).isInstanceOf(AssertionError.class);
    }
}
