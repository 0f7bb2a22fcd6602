package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A run's tasks on the shared threads, alone: latches hold them, nothing sleeps. */
class RunTasksTest {

    /**
     * A run keeps no more than its limit of tasks alive: the third of a limit of two is handed over
     * only once one of the first two has ended, and the run waits for all three, the one that
     * threw included. Without the limit the third would start at once and the count would reach 3.
     */
    @Test
    void aRunKeepsItsLimitOfTasksAliveAndWaitsForAllOfThem() throws Exception {
        RunTasks tasks = new RunTasks(2);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger alive = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger ended = new AtomicInteger();
        Runnable held = () -> {
            most.accumulateAndGet(alive.incrementAndGet(), Math::max);
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                alive.decrementAndGet();
                ended.incrementAndGet();
            }
        };
        tasks.execute(held);
        tasks.execute(() -> {
            held.run();
            throw new IllegalStateException("a task that fails still ends");
        });
        AtomicBoolean thirdHandedOver = new AtomicBoolean();
        Thread submitter = new Thread(() -> {
            tasks.execute(held);
            thirdHandedOver.set(true);
        });
        submitter.start();
        // Both held tasks are running before the third is asked for; it must still wait.
        await().atMost(Duration.ofSeconds(10)).until(() -> alive.get() == 2 && submitter.getState() == Thread.State.WAITING);
        assertThat(thirdHandedOver).as("the third task waits for a place").isFalse();
        release.countDown();
        submitter.join(TimeUnit.SECONDS.toMillis(10));
        tasks.awaitAll();
        assertThat(ended).as("every task ended before awaitAll returned").hasValue(3);
        assertThat(most).as("tasks alive at once").hasValue(2);
    }

    /** An interrupt ends the wait, not the tasks: the flag is set again for the caller to see. */
    @Test
    void anInterruptEndsTheWaitWithTheFlagSet() throws Exception {
        RunTasks tasks = new RunTasks(1);
        CountDownLatch release = new CountDownLatch(1);
        tasks.execute(() -> {
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        AtomicBoolean flagSet = new AtomicBoolean();
        Thread waiter = new Thread(() -> {
            tasks.awaitAll();
            flagSet.set(Thread.currentThread().isInterrupted());
        });
        waiter.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> waiter.getState() == Thread.State.WAITING);
        waiter.interrupt();
        waiter.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(waiter.isAlive()).isFalse();
        assertThat(flagSet).isTrue();
        release.countDown();
        tasks.awaitAll();
    }
}
