package dev.fenced;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/*
 * A copy of fenced-test-support's dev.fenced.testing.SettableClock: that module depends on this one, so
 * this module's tests cannot use it. Change both or neither.
 */
/**
 * A clock that moves only when the test moves it, as db-scheduler's {@code SettableClock} does:
 * hand it to what reads time ({@code InMemoryLeaseStore}, {@code LeaseWatchdog},
 * {@code FencedExecutor}) and test timed behaviour without waiting for it.
 *
 * <p>Thread-safe: any thread may read it while the test moves it. It never moves by itself, so it
 * is not monotonic in the sense a test asks for: {@link #set} may move it back.
 */
final class SettableClock extends Clock {
    /** Where a clock built without an instant starts: a fixed day, so that runs are alike. */
    public static final Instant DEFAULT_START = Instant.parse("2026-01-01T00:00:00Z");

    private final AtomicReference<Instant> now;
    private final ZoneId zone;

    /** A clock at {@link #DEFAULT_START}, in UTC. */
    public SettableClock() {
        this(DEFAULT_START);
    }

    /** A clock at {@code start}, in UTC. */
    public SettableClock(Instant start) {
        this(new AtomicReference<>(Objects.requireNonNull(start, "start")), ZoneOffset.UTC);
    }

    private SettableClock(AtomicReference<Instant> now, ZoneId zone) {
        this.now = now;
        this.zone = zone;
    }

    /** Moves the clock forward by {@code duration}; a negative duration is refused, {@link #set} moves it anywhere. */
    public void advance(Duration duration) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException("a clock advances by zero or more, got " + duration);
        }
        now.updateAndGet(instant -> instant.plus(duration));
    }

    /** Puts the clock at {@code instant}. */
    public void set(Instant instant) {
        now.set(Objects.requireNonNull(instant, "instant"));
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    /** The same time, seen in another zone: moving either moves both. */
    @Override
    public Clock withZone(ZoneId zone) {
        return new SettableClock(now, Objects.requireNonNull(zone, "zone"));
    }

    @Override
    public String toString() {
        return "SettableClock[" + now.get() + "]";
    }
}
