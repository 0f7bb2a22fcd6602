package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fenced.FenceViolation;
import dev.fenced.FencedException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The group commit alone: no database, a batch write that records what it was given. */
class ConfirmBatcherTest {

    /**
     * While one batch is being written, the confirms that arrive wait and go out together in the
     * next one; each caller hears only its own row's answer. A batcher that wrote each confirm alone
     * would need nine writes and fail the count. The first write is released only once all eight
     * callers wait inside the batcher, so the second batch holds all eight.
     */
    @Test
    void confirmsThatArriveDuringAWriteGoOutTogetherAndEachHearsItsOwnAnswer() throws Exception {
        HeldFirstWrite held = HeldFirstWrite.answering(
                batch -> batch.containsKey("r_7") ? Map.of("r_7", new FenceViolation("refund", "r_7", 5, 6L, "sending")) : Map.of());
        ConfirmBatcher<String> batcher = held.batcher();
        List<Map<String, String>> batches = held.batches();
        ExecutorService pool = Executors.newFixedThreadPool(1);
        List<Thread> callers = new ArrayList<>();
        try {
            Future<Optional<FencedException>> first = pool.submit(() -> batcher.confirm("r_0", "gw_0"));
            held.awaitEntered();
            List<FutureTask<Optional<FencedException>>> waiting = new ArrayList<>();
            for (int i = 1; i <= 8; i++) {
                String id = "r_" + i;
                Caller caller = Caller.start(id, () -> batcher.confirm(id, "gw_" + id));
                waiting.add(caller.answer());
                callers.add(caller.thread());
            }
            // A caller's only wait on its way is the batcher's, for the running write: once all eight
            // wait, all eight are in the next batch. Polled, because the batcher tells no one.
            await("the eight callers wait inside the batcher").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                    .until(() -> callers.stream().allMatch(caller -> caller.getState() == Thread.State.WAITING));
            held.releaseFirstWrite();
            assertThat(first.get(5, TimeUnit.SECONDS)).isEmpty();
            for (int i = 1; i <= 8; i++) {
                Optional<FencedException> answer = waiting.get(i - 1).get(5, TimeUnit.SECONDS);
                assertThat(answer.isPresent()).as("r_%d refused", i).isEqualTo(i == 7);
            }
        } finally {
            pool.shutdownNow();
            callers.forEach(Thread::interrupt);
        }
        assertThat(batches.get(0)).containsOnlyKeys("r_0");
        assertThat(batches).as("the eight that waited together go in one write").hasSize(2);
        assertThat(batches.get(1)).hasSize(8).containsEntry("r_1", "gw_r_1");
    }

    @Test
    void aFailedWriteReachesEveryCallerOfItsBatch() {
        ConfirmBatcher<String> batcher = new ConfirmBatcher<>(batch -> {
            throw new SQLException("connection reset");
        });
        assertThatThrownBy(() -> batcher.confirm("r_1", "gw_1")).isInstanceOf(SQLException.class).hasMessageContaining("reset");
        assertThatThrownBy(() -> batcher.confirm("r_2", "gw_2")).as("the batcher is usable after a failure")
                .isInstanceOf(SQLException.class);
    }

    /**
     * A batch write that answers null is a failure its callers hear, not a hang: the writer's turn
     * still goes on, so the batcher is usable afterwards.
     */
    @Test
    @Timeout(30)
    void aWriteThatAnswersNullIsAFailureAndTheBatcherGoesOn() {
        AtomicInteger writes = new AtomicInteger();
        ConfirmBatcher<String> batcher = new ConfirmBatcher<>(batch -> writes.incrementAndGet() == 1 ? null : Map.of());
        assertThatThrownBy(() -> batcher.confirm("r_1", "gw_1")).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("answered null");
        assertThatCode(() -> assertThat(batcher.confirm("r_2", "gw_2")).isEmpty()).doesNotThrowAnyException();
    }

    /**
     * An Error on the writer's way to its write (out of memory while it gathers, before its batch is
     * taken) reaches the writer and the confirms that came while it gathered as a failure, and the
     * turn is given up: the batcher is usable afterwards. A turn kept by a writer that is gone would
     * leave every later confirm waiting, and its row `sending`.
     */
    @Test
    void anErrorWhileTheWriterGathersFailsItsBatchAndTheBatcherGoesOn() throws Exception {
        List<Map<String, String>> batches = new CopyOnWriteArrayList<>();
        AtomicBoolean armed = new AtomicBoolean();
        AtomicInteger places = new AtomicInteger(3);
        Thread[] writer = new Thread[1];
        // Three places: the writer gathers until the third confirm comes, then reads the places again and meets the Error.
        ConfirmBatcher<String> batcher = new ConfirmBatcher<>(recording(batches), Duration.ofMinutes(10), () -> {
            if (Thread.currentThread() == writer[0] && armed.get()) {
                throw new OutOfMemoryError("while gathering");
            }
            return places.get();
        });
        // On threads of their own: a caller waiting for a turn nobody hands on parks through interrupts and timeouts.
        Caller first = Caller.start("r_1", () -> batcher.confirm("r_1", "gw_1"));
        writer[0] = first.thread();
        awaitGathering(first.thread());
        Caller second = Caller.start("r_2", () -> batcher.confirm("r_2", "gw_2"));
        // Polled, because the batcher tells no one: r_2 parked, so that only an unpark can end its wait.
        await("r_2 waits inside the batcher").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(() -> second.thread().getState() == Thread.State.WAITING);
        armed.set(true);
        Caller third = Caller.start("r_3", () -> batcher.confirm("r_3", "gw_3"));
        for (Caller failed : List.of(first, second, third)) {
            assertThatThrownBy(() -> failed.answer().get(10, TimeUnit.SECONDS)).as("%s", failed.thread().getName())
                    .hasStackTraceContaining("OutOfMemoryError: while gathering");
        }
        armed.set(false);
        places.set(1); // no gather: the next confirm is written at once
        Caller next = Caller.start("r_4", () -> batcher.confirm("r_4", "gw_4"));
        assertThat(next.answer().get(10, TimeUnit.SECONDS)).as("the next confirm written, not left waiting").isEmpty();
        assertThat(batches).as("r_1 to r_3 failed unwritten, r_4 written alone").containsExactly(Map.of("r_4", "gw_4"));
    }

    /**
     * Keys name the confirms in flight: a second confirm under a key that is waiting already (one
     * refund confirmed twice by one run, or a batcher keyed too coarsely) is refused at once. Put in
     * its place, it would have left the first caller waiting for an answer no batch gives. The
     * first write is held so that the first {@code r_1} is surely waiting when the second comes.
     */
    @Test
    void aConfirmUnderAKeyAlreadyWaitingIsRefusedAndTheWaitingOneIsAnswered() throws Exception {
        HeldFirstWrite held = HeldFirstWrite.answering(batch -> Map.of());
        ConfirmBatcher<String> batcher = held.batcher();
        List<Map<String, String>> batches = held.batches();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            Future<Optional<FencedException>> leader = pool.submit(() -> batcher.confirm("r_0", "gw_0"));
            held.awaitEntered();
            Caller first = Caller.start("r_1", () -> batcher.confirm("r_1", "gw_first"));
            // Polled, because the batcher tells no one: its only wait is the one for the running write.
            await("the first r_1 waits inside the batcher").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                    .until(() -> first.thread().getState() == Thread.State.WAITING);

            Future<Optional<FencedException>> second = pool.submit(() -> batcher.confirm("r_1", "gw_second"));
            assertThatThrownBy(() -> second.get(5, TimeUnit.SECONDS)).as("refused at once, not left waiting")
                    .hasCauseInstanceOf(IllegalStateException.class).hasMessageContaining("r_1 is already waiting");

            held.releaseFirstWrite();
            assertThat(leader.get(5, TimeUnit.SECONDS)).isEmpty();
            assertThat(first.answer().get(5, TimeUnit.SECONDS)).as("the first r_1 is answered").isEmpty();
            assertThat(batches.get(1)).containsOnly(Map.entry("r_1", "gw_first"));
        } finally {
            held.releaseFirstWrite();
            pool.shutdownNow();
        }
    }

    /**
     * A writer that gathers waits for the confirms that come after it and writes them with its own,
     * in one batch: here until three wait, as many as can, its bound (ten minutes) far away. The second and third
     * callers start only once the first is either gathering or done. <b>Control</b>: a batcher that
     * does not gather has written the first confirm alone by then, so its first batch holds one.
     */
    @ParameterizedTest(name = "gathering: {0}")
    @ValueSource(booleans = {true, false})
    void aWriterThatGathersWritesTheConfirmsThatComeAfterItInOneBatch(boolean gathers) throws Exception {
        List<Map<String, String>> batches = new CopyOnWriteArrayList<>();
        ConfirmBatcher<String> batcher = gathers ? new ConfirmBatcher<>(recording(batches), Duration.ofMinutes(10), () -> 3)
                : new ConfirmBatcher<>(recording(batches));
        List<FutureTask<Optional<FencedException>>> confirms = new ArrayList<>();
        List<Thread> callers = new ArrayList<>();
        try {
            for (int i = 1; i <= 3; i++) {
                String id = "r_" + i;
                Caller caller = Caller.start(id, () -> batcher.confirm(id, "gw_" + id));
                confirms.add(caller.answer());
                callers.add(caller.thread());
                if (i == 1) {
                    // Polled, because the batcher tells no one: a gathering writer waits with a timeout, one that does not has returned.
                    await("the first caller gathers or is done").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                            .until(() -> caller.thread().getState() == Thread.State.TIMED_WAITING || caller.answer().isDone());
                }
            }
            for (FutureTask<Optional<FencedException>> confirm : confirms) {
                assertThat(confirm.get(10, TimeUnit.SECONDS)).isEmpty();
            }
        } finally {
            callers.forEach(Thread::interrupt);
        }
        if (gathers) {
            assertThat(batches).as("one batch: the writer waited for the other two").hasSize(1);
            assertThat(batches.get(0)).containsOnlyKeys("r_1", "r_2", "r_3");
        } else {
            assertThat(batches.get(0)).as("control: written before the others came").containsOnlyKeys("r_1");
        }
    }

    /**
     * The gather is bounded: a writer alone, with room for 63 more that never come, is seen
     * gathering and then writes its confirm once the gather (a second) is over. A gather without a
     * bound fails on the test's timeout instead of hanging the build.
     */
    @Test
    @Timeout(30)
    void aWriterAloneGathersThenWritesOnceItsGatherIsOver() throws Exception {
        List<Map<String, String>> batches = new CopyOnWriteArrayList<>();
        ConfirmBatcher<String> batcher = new ConfirmBatcher<>(recording(batches), Duration.ofSeconds(1), () -> 64);
        Caller writer = Caller.start("r_1", () -> batcher.confirm("r_1", "gw_1"));
        awaitGathering(writer.thread());
        assertThat(batches).as("nothing written while it gathers").isEmpty();
        assertThat(writer.answer().get(20, TimeUnit.SECONDS)).isEmpty();
        assertThat(batches).containsExactly(Map.of("r_1", "gw_1"));
    }

    /** A writer that is every place there is writes at once, however long its gather: no confirm can come to join it. */
    @Test
    @Timeout(30)
    void aWriterThatIsEveryPlaceWritesAtOnce() throws Exception {
        List<Map<String, String>> batches = new CopyOnWriteArrayList<>();
        ConfirmBatcher<String> batcher = new ConfirmBatcher<>(recording(batches), Duration.ofMinutes(10), () -> 1);
        assertThat(batcher.confirm("r_1", "gw_1")).isEmpty();
        assertThat(batches).containsExactly(Map.of("r_1", "gw_1"));
    }

    /**
     * An interrupted writer stops gathering and writes what waits at once: a confirm is not
     * abandoned half-way, and the caller gets its interrupt back.
     */
    @Test
    void anInterruptedWriterWritesAtOnceAndKeepsItsInterrupt() throws Exception {
        List<Map<String, String>> batches = new CopyOnWriteArrayList<>();
        ConfirmBatcher<String> batcher = new ConfirmBatcher<>(recording(batches), Duration.ofMinutes(10), () -> 64);
        AtomicBoolean interruptedAfter = new AtomicBoolean();
        Caller writer = Caller.start("r_1", () -> {
            Optional<FencedException> answer = batcher.confirm("r_1", "gw_1");
            interruptedAfter.set(Thread.currentThread().isInterrupted());
            return answer;
        });
        awaitGathering(writer.thread());
        writer.thread().interrupt();
        assertThat(writer.answer().get(10, TimeUnit.SECONDS)).isEmpty();
        assertThat(batches).containsExactly(Map.of("r_1", "gw_1"));
        assertThat(interruptedAfter).as("the interrupt is kept for the caller").isTrue();
    }

    /**
     * A caller waiting for another's write keeps waiting when interrupted, parked (not spinning on its
     * interrupt), gets its answer once the write is done, and its interrupt back: a confirm is not
     * abandoned half-way. The first write is held so that the interrupt surely comes while it waits.
     */
    @Test
    void anInterruptedCallerWaitsForItsAnswerAndKeepsItsInterrupt() throws Exception {
        HeldFirstWrite held = HeldFirstWrite.answering(batch -> Map.of());
        ConfirmBatcher<String> batcher = held.batcher();
        List<Map<String, String>> batches = held.batches();
        AtomicBoolean interruptedAfter = new AtomicBoolean();
        Caller writer = Caller.start("r_0", () -> batcher.confirm("r_0", "gw_0"));
        try {
            held.awaitEntered();
            Caller waiter = Caller.start("r_1", () -> {
                Optional<FencedException> answer = batcher.confirm("r_1", "gw_1");
                interruptedAfter.set(Thread.currentThread().isInterrupted());
                return answer;
            });
            // Polled, because the batcher tells no one: its only wait is the one for the running write.
            await("r_1 waits inside the batcher").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                    .until(() -> waiter.thread().getState() == Thread.State.WAITING);
            waiter.thread().interrupt();
            await("r_1 waits again after its interrupt").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                    .until(() -> !waiter.thread().isInterrupted() && waiter.thread().getState() == Thread.State.WAITING);
            assertThat(waiter.answer().isDone()).as("still waiting for the write").isFalse();
            held.releaseFirstWrite();
            assertThat(writer.answer().get(5, TimeUnit.SECONDS)).isEmpty();
            assertThat(waiter.answer().get(5, TimeUnit.SECONDS)).isEmpty();
        } finally {
            held.releaseFirstWrite();
        }
        assertThat(batches).containsExactly(Map.of("r_0", "gw_0"), Map.of("r_1", "gw_1"));
        assertThat(interruptedAfter).as("the interrupt is kept for the caller").isTrue();
    }

    @Test
    void aNegativeGatherIsRefused() {
        assertThatThrownBy(() -> new ConfirmBatcher<String>(batch -> Map.of(), Duration.ofMillis(-1), () -> 8))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("gather");
    }

    /** A confirm on a thread of its own, started: its answer and its thread. */
    private record Caller(FutureTask<Optional<FencedException>> answer, Thread thread) {
        static Caller start(String refundId, Callable<Optional<FencedException>> confirm) {
            FutureTask<Optional<FencedException>> answer = new FutureTask<>(confirm);
            Thread thread = new Thread(answer, "confirm-" + refundId);
            thread.start();
            return new Caller(answer, thread);
        }
    }

    /** Polled, because the batcher tells no one: a writer's gather is its only timed wait. */
    private static void awaitGathering(Thread writer) {
        await("the writer gathers").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(() -> writer.getState() == Thread.State.TIMED_WAITING);
    }

    /** A batch write that records each batch in {@code batches} and refuses nothing. */
    private static ConfirmBatcher.BatchWrite<String> recording(List<Map<String, String>> batches) {
        return batch -> {
            batches.add(Map.copyOf(batch));
            return Map.of();
        };
    }

    /**
     * A batcher whose writes record their batch in {@code batches} and answer with the given
     * function; its first write says it has {@code entered} and waits (at most 5 s) for {@code release}.
     */
    private record HeldFirstWrite(ConfirmBatcher<String> batcher, List<Map<String, String>> batches, CountDownLatch entered,
                                  CountDownLatch release) {
        static HeldFirstWrite answering(Function<Map<String, String>, Map<String, FencedException>> answer) {
            List<Map<String, String>> batches = new CopyOnWriteArrayList<>();
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            ConfirmBatcher<String> batcher = new ConfirmBatcher<>(batch -> {
                batches.add(Map.copyOf(batch));
                if (batches.size() == 1) {
                    entered.countDown();
                    awaitRelease(release);
                }
                return answer.apply(batch);
            });
            return new HeldFirstWrite(batcher, batches, entered, release);
        }

        void awaitEntered() throws InterruptedException {
            assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
        }

        void releaseFirstWrite() {
            release.countDown();
        }
    }

    private static void awaitRelease(CountDownLatch latch) {
        try {
            latch.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
