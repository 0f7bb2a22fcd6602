package dev.fenced.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.LeaseStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's own provider contract (lock, contention, {@code lockAtMostFor}, {@code lockAtLeastFor},
 * extend, unlock, its multi-thread fuzz test), as every ShedLock provider's test runs it, plus what
 * the bridge adds: a token per lock, the task's view of it, and names refused before anything is
 * written. One subclass per lease store; ShedLock's suite waits out real time with sleeps of its own.
 */
abstract class FencedLockProviderContract extends AbstractExtensibleLockProviderIntegrationTest {
    /** A prefix of this run's own, so runs that share a server never see each other's locks. */
    private final String prefix = "shedlock-" + UUID.randomUUID().toString().substring(0, 8) + ":";
    private FencedLockProvider provider;

    protected abstract LeaseStore store();

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        if (provider == null) {
            provider = FencedLockProvider.builder(store()).prefix(prefix).build();
        }
        return provider;
    }

    private FencedLockProvider provider() {
        return (FencedLockProvider) getLockProvider();
    }

    @Override
    protected void assertUnlocked(String lockName) {
        assertThat(store().view(provider().resourceOf(lockName)).held()).as(lockName + " unlocked").isFalse();
    }

    @Override
    protected void assertLocked(String lockName) {
        assertThat(store().view(provider().resourceOf(lockName)).held()).as(lockName + " locked").isTrue();
    }

    @Test
    void eachLockCarriesAHigherTokenAndAnExtensionKeepsIt() {
        FencedSimpleLock first = lock(LOCK_NAME1, Duration.ofMinutes(1));
        first.unlock();
        FencedSimpleLock second = lock(LOCK_NAME1, Duration.ofMinutes(1));
        assertThat(second.token()).isGreaterThan(first.token());

        FencedSimpleLock extended = (FencedSimpleLock) second.extend(Duration.ofMinutes(2), Duration.ZERO).orElseThrow();
        assertThat(extended.token()).isEqualTo(second.token());
        assertThat(extended.lease()).isSameAs(second.lease());
        extended.unlock();
    }

    /**
     * On a thread of its own: ShedLock's contract takes locks on the test thread that it never
     * unlocks (they expire), and a lock stays bound to its thread until it is unlocked.
     */
    @Test
    void theTaskReadsItsOwnTokenAndNothingOutsideIt() throws Throwable {
        onAFreshThread(this::readTokensInNestedTasks);
    }

    private void readTokensInNestedTasks() {
        DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(getLockProvider());
        List<Long> seen = new ArrayList<>();
        executor.executeWithLock((Runnable) () -> {
            seen.add(FencedShedLock.token());
            executor.executeWithLock((Runnable) () -> seen.add(FencedShedLock.token()), config("inner-" + LOCK_NAME1));
            seen.add(FencedShedLock.token());
        }, config(LOCK_NAME1));

        assertThat(seen).hasSize(3);
        assertThat(seen.get(2)).as("the outer task sees its own token again after the inner one").isEqualTo(seen.get(0));
        long inner = store().view(provider().resourceOf("inner-" + LOCK_NAME1)).highestTokenIssued();
        assertThat(seen.get(1)).as("the inner task sees the inner lock's token").isEqualTo(inner);
        assertThat(FencedShedLock.current()).as("after the task").isEmpty();
        assertThatThrownBy(FencedShedLock::token).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no task under a FencedLockProvider lock");
    }

    @Test
    void aLockUnlockedOnAnotherThreadIsNoLongerTheTasks() throws Throwable {
        onAFreshThread(() -> {
            FencedSimpleLock lock = lock(LOCK_NAME1, Duration.ofMinutes(1));
            assertThat(FencedShedLock.token()).isEqualTo(lock.token());
            try {
                onAFreshThread(lock::unlock);
            } catch (Throwable e) {
                throw new AssertionError(e);
            }
            assertThat(FencedShedLock.current()).isEmpty();
        });
    }

    /**
     * An inner lock whose extension found its lease gone leaves the task with the inner lease (its
     * token refused once a newer holder entered), never the outer lock's, until ShedLock's executor
     * unlocks it at the task's end (which throws, the lock being spent, and lets it go).
     */
    @Test
    void aLostInnerLockNeverHandsTheTaskTheOuterLease() throws Throwable {
        onAFreshThread(() -> {
            FencedSimpleLock outer = lock(LOCK_NAME1, Duration.ofMinutes(1));
            FencedSimpleLock inner = lock("inner-" + LOCK_NAME1, Duration.ofMinutes(1));
            assertThat(inner.lease().release()).as("the inner lease taken away behind its back").isTrue();
            assertThat(inner.extend(Duration.ofMinutes(1), Duration.ZERO)).as("the extension finds it gone").isEmpty();
            assertThat(FencedShedLock.token()).as("still the inner token").isEqualTo(inner.token());
            assertThatThrownBy(inner::unlock).isInstanceOf(IllegalStateException.class);
            assertThat(FencedShedLock.token()).as("the outer task's own token again").isEqualTo(outer.token());
            outer.unlock();
            assertThat(FencedShedLock.current()).isEmpty();
        });
    }

    private static void onAFreshThread(Runnable body) throws Throwable {
        Throwable[] failure = new Throwable[1];
        Thread thread = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failure[0] = e;
            }
        });
        thread.start();
        thread.join(Duration.ofSeconds(30).toMillis());
        assertThat(thread.isAlive()).as("the thread ended within 30 s").isFalse();
        if (failure[0] != null) {
            throw failure[0];
        }
    }

    @Test
    void aNameThatIsNoResourceIsRefusedBeforeAnythingIsWritten() {
        assertThatThrownBy(() -> getLockProvider().lock(config("nightly report")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ShedLock name 'nightly report' cannot be a fenced resource");
        assertThatThrownBy(() -> getLockProvider().lock(new LockConfiguration(Instant.now(), LOCK_NAME1, Duration.ofDays(2), Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("over the limit of one day");
        assertUnlocked(LOCK_NAME1);
    }

    private FencedSimpleLock lock(String name, Duration atMost) {
        Optional<SimpleLock> lock = getLockProvider().lock(new LockConfiguration(Instant.now(), name, atMost, Duration.ZERO));
        assertThat(lock).isPresent();
        return (FencedSimpleLock) lock.get();
    }

    private static LockConfiguration config(String name) {
        return new LockConfiguration(Instant.now(), name, Duration.ofMinutes(1), Duration.ZERO);
    }
}
