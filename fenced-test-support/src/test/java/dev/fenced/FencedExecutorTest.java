package dev.fenced;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.testing.ManualScheduler;
import dev.fenced.testing.SettableClock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The executor's own decisions, on the in-memory store (the Redis store runs the same executor in
 * {@code FencedMetersTest} and the Spring Boot starter's tests): skip, run, release, what each
 * failure becomes, and the raise after a refused write.
 *
 * <p>In the test kit's module, not fenced-core's: it needs the kit's ManualScheduler, and the kit
 * depends on fenced-core.
 */
class FencedExecutorTest {
    private final InMemoryLeaseStore store = new InMemoryLeaseStore();
    private final List<FencedExecutor.Status> reported = new ArrayList<>();
    private final FencedExecutor executor = FencedExecutor.builder(store).ttl(Duration.ofSeconds(5)).observer(new FencedObserver() {
        @Override
        public void executed(String resource, FencedExecutor.Status status, Duration took) {
            reported.add(status);
        }
    }).build();

    @Test
    void runsWithAFreshTokenAndReleasesAfter() {
        FencedExecutor.Outcome<Long> first = executor.execute("job:a", Lease::token);
        FencedExecutor.Outcome<Long> second = executor.execute("job:a", Lease::token);
        assertThat(first.status()).isEqualTo(FencedExecutor.Status.EXECUTED);
        assertThat(second.orThrow()).as("released after the first run, a greater token for the second").isGreaterThan(first.orThrow());
        assertThat(reported).containsExactly(FencedExecutor.Status.EXECUTED, FencedExecutor.Status.EXECUTED);
    }

    /**
     * ShedLock's lockAtLeastFor: a run shorter than the minimum hold leaves the lease in place until
     * the hold is out by the store's clock, so the same job skips elsewhere meanwhile; a run without
     * it (the control) releases at once.
     */
    @Test
    void aMinimumHoldKeepsTheLeaseAfterAShortRunUntilItIsOut() {
        SettableClock storeClock = new SettableClock();
        InMemoryLeaseStore leases = new InMemoryLeaseStore(storeClock);
        FencedExecutor holding = FencedExecutor.builder(leases).ttl(Duration.ofSeconds(30)).minHold(Duration.ofSeconds(10)).build();

        long first = holding.execute("job:hold", Lease::token).orThrow();
        assertThat(leases.view("job:hold").held()).as("kept after the run returned").isTrue();
        assertThat(leases.timeLeft("job:hold")).as("cut to what is left of the hold, not the TTL").isLessThanOrEqualTo(Duration.ofSeconds(10))
                .isGreaterThan(Duration.ofSeconds(9));
        assertThat(holding.execute("job:hold", Lease::token).status()).as("the same job elsewhere, at once").isEqualTo(FencedExecutor.Status.BUSY);
        storeClock.advance(Duration.ofSeconds(10));
        assertThat(holding.execute("job:hold", Lease::token).orThrow()).as("once the hold is out").isGreaterThan(first);

        FencedExecutor releasing = holding.with(Duration.ofSeconds(30), Duration.ZERO);
        storeClock.advance(Duration.ofSeconds(10));
        releasing.execute("job:free", Lease::token).orThrow();
        assertThat(releasing.execute("job:free", Lease::token).status()).as("control: no hold, released at once").isEqualTo(FencedExecutor.Status.EXECUTED);
        assertThatThrownBy(() -> holding.with(Duration.ofSeconds(5), Duration.ofSeconds(6))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("minimum hold");
        assertThatThrownBy(() -> FencedExecutor.builder(leases).minHold(Duration.ofSeconds(-1)).build()).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aLiveLeaseElsewhereSkipsTheRun() {
        Lease held = store.tryAcquire("job:b", Duration.ofSeconds(5)).orElseThrow();
        FencedExecutor.Outcome<Object> skipped = executor.execute("job:b", lease -> {
            throw new AssertionError("must not run");
        });
        assertThat(skipped.status()).isEqualTo(FencedExecutor.Status.BUSY);
        assertThat(skipped.token()).isZero();
        assertThatThrownBy(skipped::orThrow).isInstanceOf(FencedException.class).hasMessageContaining("held by another holder");
        assertThat(held.isHeld()).isTrue();
    }

    @Test
    void aRefusedWriteRaisesTheCounterPastTheStoredFence() {
        FencedExecutor.Outcome<Object> refused = executor.execute("job:c", lease -> {
            throw new IllegalStateException("wrapped", new FenceViolation("t", "row_1", lease.token(), 40L, "sending"));
        });
        assertThat(refused.status()).isEqualTo(FencedExecutor.Status.FENCED_OUT);
        assertThat(refused.violation()).get().extracting(FenceViolation::storedFence).isEqualTo(40L);
        assertThat(executor.execute("job:c", Lease::token).orThrow()).as("the next token is above the stored fence").isEqualTo(41L);
        // Control: an ordinary failure raises nothing.
        FencedExecutor.Outcome<Object> failed = executor.execute("job:d", lease -> {
            throw new IOException("disk full");
        });
        assertThat(failed.status()).isEqualTo(FencedExecutor.Status.FAILED);
        assertThatThrownBy(failed::orThrow).isInstanceOf(FencedException.class).hasCauseInstanceOf(IOException.class);
        assertThat(executor.execute("job:d", Lease::token).orThrow()).isEqualTo(2L);
    }

    @Test
    void aStoreThatFailsIsAnOutcomeAndABadResourceIsTheCallersMistake() {
        LeaseStore down = (resource, ttl) -> {
            throw new StoreUnavailableException("Redis at redis://127.0.0.1:1 is unreachable", null);
        };
        FencedExecutor.Outcome<Object> outcome = FencedExecutor.builder(down).build().execute("job:e", lease -> null);
        assertThat(outcome.status()).isEqualTo(FencedExecutor.Status.FAILED);
        assertThat(outcome.failure()).isInstanceOf(StoreUnavailableException.class);
        assertThatThrownBy(() -> executor.execute("bad name", lease -> null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FencedExecutor.builder(store).renewalFraction(1.5)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Renewal runs while the task runs; a lease taken away meanwhile is reported, and the task is not
     * stopped. Time is the test's: the store, the watchdog and its scheduler share one clock that the
     * task moves, and each renewal runs when the clock reaches it.
     */
    @Test
    void aLeaseLostWhileRunningIsReported() {
        ManualScheduler scheduler = new ManualScheduler();
        InMemoryLeaseStore timed = new InMemoryLeaseStore(scheduler.clock());
        FencedExecutor renewing = FencedExecutor.builder(timed).ttl(Duration.ofSeconds(1)).renewalFraction(0.1)
                .scheduler(scheduler).clock(scheduler.clock()).build();
        FencedExecutor.Outcome<String> outcome = renewing.execute("job:f", lease -> {
            // Longer than the TTL: only the renewals (every 100 ms) keep the lease.
            assertThat(scheduler.advance(Duration.ofMillis(1_500))).as("renewals").isEqualTo(15);
            assertThat(lease.isHeld()).as("renewed past its TTL").isTrue();
            timed.expire("job:f");
            scheduler.advance(Duration.ofMillis(100)); // the next renewal finds the lease gone
            return "done";
        });
        assertThat(outcome.status()).isEqualTo(FencedExecutor.Status.EXECUTED);
        assertThat(outcome.result()).isEqualTo("done");
        assertThat(outcome.leaseLostWhileRunning()).isTrue();
    }

    /** A task stopped by an interrupt throws InterruptedException, which clears the flag; the caller must still see it. */
    @Test
    void anInterruptedTaskLeavesItsCallerInterrupted() {
        FencedExecutor.Outcome<Boolean> outcome = executor.execute("job:h", lease -> {
            Thread.currentThread().interrupt(); // as a cancel from another thread would
            return new CountDownLatch(1).await(10, TimeUnit.SECONDS); // throws at once: the thread is interrupted
        });
        boolean interrupted = Thread.interrupted(); // read and cleared, so that it does not leak into other tests
        assertThat(outcome.status()).isEqualTo(FencedExecutor.Status.FAILED);
        assertThat(outcome.failure()).isInstanceOf(InterruptedException.class);
        assertThat(interrupted).as("the interrupt restored for the caller").isTrue();
        assertThat(executor.execute("job:h", Lease::token).orThrow()).as("released all the same").isEqualTo(2L);
    }

    /** A caller interrupted before or during the run stays interrupted, whatever the task does. */
    @Test
    void anInterruptedCallerStaysInterrupted() {
        Thread.currentThread().interrupt();
        FencedExecutor.Outcome<Long> outcome = executor.execute("job:i", Lease::token);
        boolean interrupted = Thread.interrupted();
        assertThat(outcome.status()).isEqualTo(FencedExecutor.Status.EXECUTED);
        assertThat(interrupted).isTrue();
        assertThat(executor.execute("job:i", Lease::token).orThrow()).as("released all the same").isEqualTo(2L);
    }

    /** An observer that throws changes nothing: the run, its release and the next run go on. */
    @Test
    void anObserverThatThrowsChangesNothing() {
        FencedExecutor noisy = FencedExecutor.builder(store).observer(new FencedObserver() {
            @Override
            public void executed(String resource, FencedExecutor.Status status, Duration took) {
                throw new IllegalStateException("broken meter");
            }
        }).build();
        assertThat(noisy.execute("job:g", Lease::token).orThrow()).isEqualTo(1L);
        assertThat(noisy.execute("job:g", Lease::token).orThrow()).as("released despite the observer").isEqualTo(2L);
    }

    /**
     * Scopes for tracing: the run opens first and closes last, the acquisition inside it, each told
     * its outcome; a tracer whose scope throws at start or at close changes nothing either.
     */
    @Test
    void scopesNestTheAcquisitionInTheRunAndABrokenOneChangesNothing() {
        List<String> steps = new java.util.concurrent.CopyOnWriteArrayList<>();
        FencedObserver tracer = new FencedObserver() {
            @Override
            public Scope starting(Step step, String resource) {
                steps.add("open " + step);
                return new Scope() {
                    @Override
                    public void outcome(String outcome) {
                        steps.add(step + " " + outcome);
                    }

                    @Override
                    public void close() {
                        steps.add("close " + step);
                    }
                };
            }
        };
        FencedObserver broken = new FencedObserver() {
            @Override
            public Scope starting(Step step, String resource) {
                if (step == Step.RUN) {
                    throw new IllegalStateException("broken tracer");
                }
                return () -> {
                    throw new IllegalStateException("broken scope");
                };
            }
        };
        FencedExecutor traced = FencedExecutor.builder(store).observer(FencedObserver.all(broken, tracer)).build();
        assertThat(traced.execute("job:t", lease -> {
            steps.add("task");
            return lease.token();
        }).orThrow()).isEqualTo(1L);
        assertThat(steps).containsExactly("open RUN", "open ACQUIRE", "ACQUIRE granted", "close ACQUIRE", "task",
                "RUN executed", "close RUN");
        steps.clear();
        try (Lease held = store.tryAcquire("job:t", Duration.ofSeconds(5)).orElseThrow()) {
            assertThat(traced.execute("job:t", Lease::token).status()).isEqualTo(FencedExecutor.Status.BUSY);
        }
        assertThat(steps).containsExactly("open RUN", "open ACQUIRE", "ACQUIRE busy", "close ACQUIRE", "RUN busy", "close RUN");
    }
}
