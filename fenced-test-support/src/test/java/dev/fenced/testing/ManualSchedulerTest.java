package dev.fenced.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Tasks run when time reaches them, in due order, with the clock at their due time; never before. */
class ManualSchedulerTest {
    private final ManualScheduler scheduler = new ManualScheduler();
    private final List<String> ran = new ArrayList<>();

    private long secondsIn() {
        return Duration.between(SettableClock.DEFAULT_START, scheduler.clock().instant()).toSeconds();
    }

    @Test
    void tasksRunInDueOrderWithTheClockAtTheirTime() {
        scheduler.schedule(() -> ran.add("b@" + secondsIn()), 20, TimeUnit.SECONDS);
        scheduler.schedule(() -> ran.add("a@" + secondsIn()), 10, TimeUnit.SECONDS);
        scheduler.execute(() -> ran.add("now@" + secondsIn()));
        assertThat(ran).as("nothing runs before the test moves time").isEmpty();
        assertThat(scheduler.advance(Duration.ofSeconds(15))).isEqualTo(2);
        assertThat(ran).containsExactly("now@0", "a@10");
        assertThat(scheduler.clock().instant()).isEqualTo(SettableClock.DEFAULT_START.plusSeconds(15));
        scheduler.advance(Duration.ofSeconds(5));
        assertThat(ran).containsExactly("now@0", "a@10", "b@20");
    }

    @Test
    void periodicTasksRunAgainUntilCancelled() {
        ScheduledFuture<?> delayed = scheduler.scheduleWithFixedDelay(() -> ran.add("delay@" + secondsIn()), 10, 10, TimeUnit.SECONDS);
        ScheduledFuture<?> rated = scheduler.scheduleAtFixedRate(() -> ran.add("rate@" + secondsIn()), 5, 10, TimeUnit.SECONDS);
        scheduler.advance(Duration.ofSeconds(25));
        assertThat(ran).containsExactly("rate@5", "delay@10", "rate@15", "delay@20", "rate@25");
        delayed.cancel(false);
        rated.cancel(false);
        assertThat(scheduler.pendingTasks()).isZero();
        assertThat(scheduler.advance(Duration.ofMinutes(1))).isZero();
    }

    @Test
    void aTaskMayNotMoveTheTimeOfItsOwnScheduler() {
        scheduler.schedule(() -> ran.add("later"), 2, TimeUnit.SECONDS);
        ScheduledFuture<?> nested = scheduler.schedule(() -> scheduler.advance(Duration.ofSeconds(1)), 1, TimeUnit.SECONDS);
        scheduler.advance(Duration.ofSeconds(1));
        assertThatThrownBy(nested::get).hasCauseInstanceOf(IllegalStateException.class);
    }

    @Test
    void theClockMovesOnlyForward() {
        assertThatThrownBy(() -> scheduler.advance(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
        scheduler.clock().advance(Duration.ofSeconds(3));
        assertThat(scheduler.clock().withZone(java.time.ZoneId.of("Europe/Paris")).instant())
                .as("a view in another zone shares the time").isEqualTo(Instant.parse("2026-01-01T00:00:03Z"));
    }
}
