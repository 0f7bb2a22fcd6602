package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fenced.CounterLostException;
import dev.fenced.FencedExecutor;
import dev.fenced.FencedObserver;
import dev.fenced.Lease;
import dev.fenced.LeaseStore;
import dev.fenced.LeaseWatchdog;
import dev.fenced.StoreUnavailableException;
import dev.fenced.embedded.EmbeddedRedis;
import dev.fenced.testing.LeaseStoreContract;
import dev.fenced.testing.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RedisLeaseStoreTest extends LeaseStoreContract {
    private static RedisLeaseStore store;
    private static RedisClient adminClient;
    private static StatefulRedisConnection<String, String> adminConnection;
    private static RedisCommands<String, String> admin;

    @BeforeAll
    static void connect() {
        store = RedisLeaseStore.builder(TestRedis.uri()).build();
        adminClient = RedisClient.create(TestRedis.uri());
        adminConnection = adminClient.connect();
        admin = adminConnection.sync();
    }

    @AfterAll
    static void disconnect() {
        store.close();
        adminConnection.close();
        adminClient.shutdown();
    }

    @Override
    protected LeaseStore store() {
        return store;
    }

    @Override
    protected void expireLeaseBehindItsBack(String resource) {
        admin.del(store.keys().lockKey(resource));
    }

    @Override
    protected Duration timeLeft(String resource) {
        return store.inspect(resource).timeLeft();
    }

    @Test
    void withoutAPrefixTheStoreKeepsTheDeployedKeys() {
        String resource = freshResource();
        assertThat(store.keys()).isEqualTo(RedisKeys.DEFAULT); // whose names RedisKeysTest pins
        Lease lease = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(admin.get(RedisKeys.DEFAULT.lockKey(resource))).isEqualTo(lease.ownerId());
        assertThat(admin.get(RedisKeys.DEFAULT.fenceKey(resource))).isEqualTo(Long.toString(lease.token()));
        assertThat(admin.pttl(RedisKeys.DEFAULT.lockKey(resource))).isBetween(1L, 10_000L);
        lease.release();
    }

    @Test
    void storesWithDifferentKeyPrefixesHoldIndependentLeasesAndCounters() {
        String resource = freshResource();
        try (RedisLeaseStore app1 = RedisLeaseStore.builder(TestRedis.uri()).keyPrefix("fenced-test-app1:").build();
             RedisLeaseStore app2 = RedisLeaseStore.builder(TestRedis.uri()).keyPrefix("fenced-test-app2:").build()) {
            app1.raiseCounter(resource, 100);
            Lease one = app1.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            Lease two = app2.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            Lease unprefixed = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            assertThat(one.token()).as("app1's counter").isEqualTo(101);
            assertThat(two.token()).as("app2's counter, untouched by app1's").isEqualTo(1);
            assertThat(unprefixed.token()).as("the unprefixed counter").isEqualTo(1);
            assertThat(app1.tryAcquire(resource, Duration.ofSeconds(10))).as("each prefix still excludes its own").isEmpty();

            assertThat(admin.get(app1.keys().lockKey(resource))).isEqualTo(one.ownerId());
            assertThat(admin.get(app2.keys().lockKey(resource))).isEqualTo(two.ownerId());
            assertThat(two.release()).isTrue();
            assertThat(one.isHeld()).as("releasing app2's lease leaves app1's").isTrue();
            assertThat(app2.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow().token()).isEqualTo(2);
            assertThat(app1.inspect(resource).counter()).isEqualTo(101);
            one.release();
            unprefixed.release();
            app1.forget(resource); // only this test's keys: the server may be shared
            app2.forget(resource);
        }
    }

    @Test
    void inspectAndForgetWorkUnderTheStoresPrefix() {
        String resource = freshResource();
        try (RedisLeaseStore prefixed = RedisLeaseStore.builder(TestRedis.uri()).keyPrefix("fenced-test-app1:").build()) {
            Lease lease = prefixed.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            LeaseSnapshot seen = prefixed.inspect(resource);
            assertThat(seen.holder()).isEqualTo(lease.ownerId());
            assertThat(seen.counter()).isEqualTo(lease.token());
            assertThat(seen.timeLeft()).isPositive();
            assertThat(store.inspect(resource)).as("the unprefixed keys hold nothing")
                    .isEqualTo(new LeaseSnapshot(resource, null, Duration.ZERO, null));

            assertThat(store.forget(resource)).as("nothing under the unprefixed keys").isFalse();
            assertThat(lease.isHeld()).isTrue();
            assertThat(prefixed.forget(resource)).isTrue();
            assertThat(admin.exists(prefixed.keys().lockKey(resource), prefixed.keys().fenceKey(resource))).isZero();
            assertThat(prefixed.inspect(resource).holder()).isNull();
            assertThat(prefixed.forget(resource)).as("already gone").isFalse();
        }
    }

    @Test
    void anInvalidKeyPrefixIsRefusedByTheBuilderNamingIt() {
        for (String prefix : new String[] {"app 1:", "{app1}:", "app1}:", "x".repeat(65)}) {
            assertThatThrownBy(() -> RedisLeaseStore.builder(TestRedis.uri()).keyPrefix(prefix))
                    .as(prefix).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key prefix '" + prefix + "'");
        }
        assertThatThrownBy(() -> RedisLeaseStore.builder(TestRedis.uri()).keyPrefix("app1\t:"))
                .as("a control character, escaped").isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key prefix 'app1\\u0009:'");
        assertThatThrownBy(() -> RedisLeaseStore.builder(TestRedis.uri()).keyPrefix(null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key prefix must not be null");
    }

    @Test
    void acquisitionIsOneCommandToRedis() {
        String resource = freshResource();
        List<String> sent = new CopyOnWriteArrayList<>();
        CommandListener recorder = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                sent.add(event.getCommand().getType().toString());
            }
        };
        try (RedisLeaseStore counted = RedisLeaseStore.builder(TestRedis.uri()).commandListener(recorder).build()) {
            counted.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow().release(); // loads the script
            sent.clear();
            long scriptCallsBefore = serverCalls("evalsha") + serverCalls("eval");
            Lease lease = counted.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            long scriptCallsAfter = serverCalls("evalsha") + serverCalls("eval");
            assertThat(sent).as("commands the client sent for one acquisition").containsExactly("EVALSHA");
            assertThat(scriptCallsAfter - scriptCallsBefore).as("scripts Redis ran").isEqualTo(1);
            lease.release();
        }
    }

    @Test
    void aStaleReleaseLeavesTheNextHoldersLease_negativeControlAPlainDelDeletesIt() throws Exception {
        String resource = freshResource();
        Lease stale = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        expireLeaseBehindItsBack(resource); // as its TTL running out would
        Lease current = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(stale.release()).isFalse();
        assertThat(current.isHeld()).as("the compare-and-delete of the stale owner removes nothing").isTrue();

        admin.del(store.keys().lockKey(resource)); // what a release without the owner check does
        assertThat(current.isHeld()).as("control: an unconditional delete takes the current holder's lease").isFalse();
        assertThat(store.tryAcquire(resource, Duration.ofSeconds(10)).map(Lease::release)).as("control: a third holder gets in")
                .contains(true);
    }

    private long serverCalls(String command) {
        for (String line : admin.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                String calls = line.substring(line.indexOf("calls=") + 6);
                return Long.parseLong(calls.substring(0, calls.indexOf(',')));
            }
        }
        return 0;
    }

    @Test
    void survivesAnEmptiedScriptCache() {
        String resource = freshResource();
        Lease first = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        admin.scriptFlush();
        assertThat(first.release()).isTrue();
        Lease second = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(second.token()).isGreaterThan(first.token());
        second.release();
    }

    @Test
    void aFlushedCounterIsReseededAboveTheFloor() {
        String resource = freshResource();
        AtomicLong highestStored = new AtomicLong();
        TokenPolicy floor = TokenPolicy.redisCounter(r -> highestStored.get());
        try (RedisLeaseStore floored = RedisLeaseStore.builder(TestRedis.uri()).tokens(floor).build();
             RedisLeaseStore freshProcess = RedisLeaseStore.builder(TestRedis.uri()).tokens(floor).build()) {
            long last = 0;
            for (int i = 0; i < 50; i++) {
                Lease lease = floored.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
                last = lease.token();
                highestStored.accumulateAndGet(last, Math::max); // the holder wrote its token to a row
                lease.release();
            }
            floored.forget(resource); // only this test's keys: the server may be shared
            Lease afterLoss = floored.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            assertThat(afterLoss.token()).isGreaterThan(last).as("the default margin").isEqualTo(last + 1_000_001);
            afterLoss.release();

            floored.forget(resource); // only this test's keys: the server may be shared
            TokenPolicy noMarginFloor = TokenPolicy.redisCounter(r -> highestStored.get(), 0);
            try (RedisLeaseStore noMargin = RedisLeaseStore.builder(TestRedis.uri()).tokens(noMarginFloor).build()) {
                Lease exact = noMargin.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
                assertThat(exact.token()).as("without a margin the counter restarts just above the floor").isEqualTo(highestStored.get() + 1);
                exact.release();
            }
            floored.forget(resource); // only this test's keys: the server may be shared
            Lease fromAnotherProcess = freshProcess.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            assertThat(fromAnotherProcess.token()).as("a client that never saw a token still reseeds from the floor")
                    .isGreaterThan(last);
            fromAnotherProcess.release();
        }
    }

    @Test
    void negativeControl_withoutAFloorAFreshClientRestartsTheCounterAtOne() {
        // Why the floor matters: a client that saw no token cannot tell a lost counter from a new one.
        String resource = freshResource();
        for (int i = 0; i < 5; i++) {
            store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow().release();
        }
        admin.del(store.keys().fenceKey(resource));
        try (RedisLeaseStore freshProcess = RedisLeaseStore.builder(TestRedis.uri()).build()) {
            Lease lease = freshProcess.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            assertThat(lease.token()).isEqualTo(1);
            lease.release();
        }
    }

    @Test
    void withoutAFloorALostCounterIsReportedAndNoLeaseIsTaken() {
        String resource = freshResource();
        Lease lease = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        lease.release();
        admin.del(store.keys().fenceKey(resource));

        assertThatThrownBy(() -> store.tryAcquire(resource, Duration.ofSeconds(10)))
                .isInstanceOf(CounterLostException.class)
                .hasMessageContaining(resource)
                .hasMessageContaining("FenceFloor");
        assertThat(admin.exists(store.keys().lockKey(resource))).as("no lease left behind").isZero();
        assertThat(admin.exists(store.keys().fenceKey(resource))).as("counter not restarted").isZero();
    }

    @Test
    void aCounterThatWentBackwardsIsReported() {
        String resource = freshResource();
        for (int i = 0; i < 5; i++) {
            store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow().release();
        }
        admin.set(store.keys().fenceKey(resource), "2");
        assertThatThrownBy(() -> store.tryAcquire(resource, Duration.ofSeconds(10))).isInstanceOf(CounterLostException.class);
    }

    @Test
    void aFrozenRedisFailsTheCommandWithinItsTimeoutAndAnswersAgainWhenThawed() {
        try (EmbeddedRedis redis = EmbeddedRedis.start();
             RedisLeaseStore store = RedisLeaseStore.builder(redis.uri()).commandTimeout(Duration.ofSeconds(1)).build()) {
            store.tryAcquire("frozen", Duration.ofSeconds(10)).orElseThrow().release();
            redis.pause();
            long start = System.nanoTime();
            try {
                assertThatThrownBy(() -> store.tryAcquire("frozen", Duration.ofSeconds(10)))
                        .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("timed out");
                assertThat(Duration.ofNanos(System.nanoTime() - start)).as("bounded by the command timeout, not hung")
                        .isLessThan(Duration.ofSeconds(10));
            } finally {
                redis.resume();
            }
            assertThat(afterReconnect(() -> store.tryAcquire("other", Duration.ofSeconds(10)))).isPresent();
        }
    }

    /**
     * A Redis frozen (SIGSTOP) for less than the TTL, as in a failover: the renewal that times out
     * is retried after the thaw and the lease is kept; the watchdog used to report it lost at once.
     */
    @Test
    void aRenewalThatTimesOutWhileRedisIsFrozenIsRetriedAndTheLeaseKept() throws InterruptedException {
        Duration ttl = Duration.ofSeconds(5); // renewed every second; a timeout at 300 ms leaves over 3 s to retry in
        CountDownLatch failed = new CountDownLatch(1);
        CountDownLatch renewedAfterTheFailure = new CountDownLatch(1);
        FencedObserver renewals = new FencedObserver() {
            @Override
            public void renewed(String resource, long token, FencedObserver.RenewalOutcome outcome) {
                if (outcome == FencedObserver.RenewalOutcome.ERROR) {
                    failed.countDown();
                } else if (outcome == FencedObserver.RenewalOutcome.RENEWED && failed.getCount() == 0) {
                    renewedAfterTheFailure.countDown();
                }
            }
        };
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        AtomicReference<Throwable> lost = new AtomicReference<>();
        try (EmbeddedRedis redis = EmbeddedRedis.start();
             RedisLeaseStore paused = RedisLeaseStore.builder(redis.uri()).commandTimeout(Duration.ofMillis(300)).observer(renewals).build()) {
            Lease lease = paused.tryAcquire("blip", ttl).orElseThrow();
            try (LeaseWatchdog watchdog = LeaseWatchdog.start(lease, ttl, 0.2, (l, cause) -> lost.set(cause), scheduler)) {
                redis.pause();
                try {
                    assertThat(failed.await(10, TimeUnit.SECONDS)).as("a renewal timed out").isTrue();
                } finally {
                    redis.resume();
                }
                assertThat(renewedAfterTheFailure.await(10, TimeUnit.SECONDS)).as("retried and renewed after the thaw").isTrue();
                assertThat(watchdog.isLeaseLost()).isFalse();
                assertThat(lost.get()).isNull();
                assertThat(lease.isHeld()).isTrue();
            }
        } finally {
            scheduler.shutdownNow();
        }
    }

    @Test
    void aRealRestartOfRedisLosesTheCounterAndTheFloorKeepsTokensRising() {
        String resource = freshResource();
        AtomicLong highestStored = new AtomicLong();
        try (EmbeddedRedis redis = EmbeddedRedis.start();
             RedisLeaseStore floored = RedisLeaseStore.builder(redis.uri()).tokens(TokenPolicy.redisCounter(r -> highestStored.get())).build();
             RedisLeaseStore unfloored = RedisLeaseStore.builder(redis.uri()).build()) {
            long last = 0;
            for (int i = 0; i < 20; i++) {
                Lease lease = floored.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
                last = lease.token();
                highestStored.set(last);
                lease.release();
                unfloored.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow().release();
            }
            redis.restart();

            Lease afterRestart = afterReconnect(() -> floored.tryAcquire(resource, Duration.ofSeconds(10))).orElseThrow();
            assertThat(afterRestart.token()).isGreaterThan(last);
            afterRestart.release();

            redis.restart();
            assertThatThrownBy(() -> afterReconnect(() -> unfloored.tryAcquire(resource, Duration.ofSeconds(10))))
                    .isInstanceOf(CounterLostException.class);
        }
    }

    /**
     * Redis's Lua holds integers exactly only up to 2^53: a fence floor or a stored fence above it
     * (another token space's) is refused, nothing granted or raised, rather than tokens that repeat.
     * The control shows why, on the same server: two INCRs above 2^53 read back as one number in Lua.
     */
    @Test
    void aFenceAbove2To53IsRefusedRatherThanTokensThatRepeat() {
        String resource = freshResource();
        long tooHigh = TokenOutOfRangeException.LIMIT + 5;
        try (RedisLeaseStore floored = RedisLeaseStore.builder(TestRedis.uri()).tokens(TokenPolicy.redisCounter(r -> tooHigh)).build()) {
            assertThatThrownBy(() -> floored.tryAcquire(resource, Duration.ofSeconds(10))).isInstanceOf(TokenOutOfRangeException.class)
                    .hasMessageContaining("2^53").hasMessageContaining(resource);
            assertThat(admin.exists(store.keys().lockKey(resource))).as("no lease left behind").isZero();
            assertThatThrownBy(() -> floored.observeStoredFence(resource, tooHigh)).isInstanceOf(TokenOutOfRangeException.class);
            assertThat(admin.exists(store.keys().fenceKey(resource))).as("no counter raised").isZero();
        }

        String counter = store.keys().fenceKey(freshResource());
        admin.set(counter, Long.toString(TokenOutOfRangeException.LIMIT + 10));
        Long first = admin.eval("return redis.call('INCR', KEYS[1])", ScriptOutputType.INTEGER, counter);
        Long second = admin.eval("return redis.call('INCR', KEYS[1])", ScriptOutputType.INTEGER, counter);
        assertThat(second).as("control: two increments above 2^53, one number in Lua").isEqualTo(first);
        admin.del(counter);
    }

    /** The other way to keep tokens across a restart: a Redis that fsyncs every write. The test above is its control. */
    @Test
    void aRedisThatFsyncsEveryWriteKeepsTheCounterAcrossARestart(@TempDir Path dir) {
        String resource = freshResource();
        try (EmbeddedRedis redis = EmbeddedRedis.startDurable(dir);
             RedisLeaseStore unfloored = RedisLeaseStore.builder(redis.uri()).build()) {
            long last = 0;
            for (int i = 0; i < 5; i++) {
                Lease lease = unfloored.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
                last = lease.token();
                lease.release();
            }
            redis.restart();

            Lease afterRestart = afterReconnect(() -> unfloored.tryAcquire(resource, Duration.ofSeconds(10))).orElseThrow();
            assertThat(afterRestart.token()).as("the counter read back from the append-only file").isEqualTo(last + 1);
            afterRestart.release();
        }
    }

    @Test
    void aRefusalThatRevealsAHigherStoredFenceRaisesALaggingCounter() {
        // As after a failover to a replica that had not received the last INCRs.
        String resource = freshResource();
        store.raiseCounter(resource, 10);
        store.observeStoredFence(resource, 40);
        Lease next = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(next.token()).isEqualTo(41);
        next.release();
        store.observeStoredFence(resource, 5);
        assertThat(store.inspect(resource).counter()).as("never lowered").isEqualTo(41);
    }

    /** RAISE_COUNTER as it was, for the negative control: a missing counter was recreated at the refused row's fence. */
    private static final String RAISE_COUNTER_THAT_RECREATES = """
            local counter = tonumber(redis.call('GET', KEYS[1]) or '0')
            if counter < tonumber(ARGV[1]) then
              redis.call('SET', KEYS[1], ARGV[1])
            end
            return counter
            """;

    /**
     * Tokens 1 to 5 issued, fences 3 and 5 on rows, every key lost; a stale holder refused on the
     * fence-3 row reports it. The raise must not recreate the counter at 3, whose next token, 4,
     * was issued already: the next acquisition reseeds above the floor, or reports the loss.
     */
    @Test
    void aRaiseAfterTheKeysWereLostNeverBringsBackAnIssuedToken_negativeControlTheOldRaiseIssuesFourAgain() {
        String resource = freshResource();
        String control = freshResource();
        try (RedisLeaseStore unfloored = RedisLeaseStore.builder(TestRedis.uri()).build();
             RedisLeaseStore floored = RedisLeaseStore.builder(TestRedis.uri()).tokens(TokenPolicy.redisCounter(r -> 5)).build();
             RedisLeaseStore flooredControl = RedisLeaseStore.builder(TestRedis.uri()).tokens(TokenPolicy.redisCounter(r -> 5)).build()) {
            for (String r : List.of(resource, control)) {
                for (long expected = 1; expected <= 5; expected++) {
                    Lease lease = unfloored.tryAcquire(r, Duration.ofSeconds(10)).orElseThrow();
                    assertThat(lease.token()).isEqualTo(expected);
                    lease.release();
                }
                unfloored.forget(r); // every key of the resource, as a restart without persistence loses them
            }

            floored.observeStoredFence(resource, 3);
            Lease next = floored.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
            assertThat(next.token()).as("reseeded above the floor of 5, with the margin").isEqualTo(5 + 1_000_000 + 1);
            next.release();

            unfloored.forget(resource);
            unfloored.observeStoredFence(resource, 3);
            assertThat(unfloored.inspect(resource).counter()).as("a missing counter stays missing").isNull();
            assertThatThrownBy(() -> unfloored.tryAcquire(resource, Duration.ofSeconds(10)))
                    .as("without a floor, the store that saw token 5 reports the loss").isInstanceOf(CounterLostException.class);

            admin.eval(RAISE_COUNTER_THAT_RECREATES, ScriptOutputType.INTEGER, new String[] {flooredControl.keys().fenceKey(control)}, "3");
            Lease repeated = flooredControl.tryAcquire(control, Duration.ofSeconds(10)).orElseThrow();
            assertThat(repeated.token()).as("control: the old raise recreates the counter at 3 and token 4 comes again").isEqualTo(4);
            repeated.release();
        } finally {
            store.forget(resource); // only this test's keys: the server may be shared
            store.forget(control);
        }
    }

    /** Seeding is for a resource that never issued a token: after a loss, it would issue the tokens above the stored fences again. */
    @Test
    void raiseCounterRefusesToRecreateACounterLostAfterTokensWereIssued() {
        String resource = freshResource();
        try (RedisLeaseStore fresh = RedisLeaseStore.builder(TestRedis.uri()).build()) {
            for (int i = 0; i < 5; i++) {
                store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow().release();
            }
            admin.del(store.keys().fenceKey(resource)); // the issuer key stays: tokens were issued
            assertThatThrownBy(() -> fresh.raiseCounter(resource, 3)).as("Redis records an issuer")
                    .isInstanceOf(CounterLostException.class).hasMessageContaining(resource);
            store.forget(resource);
            assertThatThrownBy(() -> store.raiseCounter(resource, 3)).as("nothing in Redis, but this store saw token 5")
                    .isInstanceOf(CounterLostException.class);
            assertThat(store.inspect(resource).counter()).as("nothing recreated").isNull();
        } finally {
            store.forget(resource);
        }
    }

    /**
     * A task that keeps the interrupt (sets the flag again, as it should) or throws it: the caller
     * sees the flag afterwards, and the lease is released all the same, though Lettuce fails a
     * command on an interrupted thread.
     */
    @Test
    void anInterruptedRunLeavesTheFlagSetAndItsLeaseReleased() {
        String resource = freshResource();
        FencedExecutor executor = FencedExecutor.builder(store).ttl(Duration.ofSeconds(30)).build();
        FencedExecutor.Outcome<Long> kept = executor.execute(resource, lease -> {
            Thread.currentThread().interrupt(); // a task that caught an InterruptedException and kept the flag
            return lease.token();
        });
        boolean keptInterrupted = Thread.interrupted(); // read and cleared, so that it does not leak into other tests
        assertThat(kept.status()).isEqualTo(FencedExecutor.Status.EXECUTED);
        assertThat(keptInterrupted).isTrue();
        assertThat(store.inspect(resource).holder()).as("released, not left to its 30 s TTL").isNull();

        FencedExecutor.Outcome<Object> thrown = executor.execute(resource, lease -> {
            throw new InterruptedException("cancelled");
        });
        boolean thrownInterrupted = Thread.interrupted();
        assertThat(thrown.status()).isEqualTo(FencedExecutor.Status.FAILED);
        assertThat(thrownInterrupted).as("the flag the exception cleared, restored").isTrue();
        assertThat(store.inspect(resource).holder()).isNull();

        // A caller interrupted before the run: Lettuce refuses the command when it sees the flag before
        // the answer, and not when the answer came first (a race on a fast server: CI saw both).
        Thread.currentThread().interrupt();
        FencedExecutor.Outcome<Long> interrupted = executor.execute(resource, Lease::token);
        boolean callerInterrupted = Thread.interrupted();
        assertThat(callerInterrupted).as("the caller stays interrupted, whatever the run did (%s)", interrupted.status()).isTrue();
        if (interrupted.status() == FencedExecutor.Status.FAILED) {
            assertThat(interrupted.failure()).isInstanceOf(StoreUnavailableException.class);
        } else {
            assertThat(interrupted.status()).isEqualTo(FencedExecutor.Status.EXECUTED);
        }
        store.forget(resource);
    }

    /**
     * A process that touches many resources (a fleet worker over 100k merchants) remembers the
     * highest token of the most recent few only; a forgotten one is treated as by a client that
     * never saw its tokens.
     */
    @Test
    void theTokensRememberedAreBoundedToTheMostRecentResources() {
        List<String> resources = new ArrayList<>();
        try (RedisLeaseStore bounded = RedisLeaseStore.builder(TestRedis.uri()).tokensRemembered(3).build()) {
            for (int i = 0; i < 10; i++) {
                String resource = freshResource();
                resources.add(resource);
                bounded.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow().release();
                assertThat(bounded.resourcesRemembered()).as("after %d resources", i + 1).isEqualTo(Math.min(i + 1, 3));
            }
            String recent = resources.get(9);
            String forgotten = resources.get(0);
            admin.del(bounded.keys().fenceKey(recent), bounded.keys().fenceKey(forgotten));
            assertThatThrownBy(() -> bounded.tryAcquire(recent, Duration.ofSeconds(10)))
                    .as("a recent resource's lost counter is still caught").isInstanceOf(CounterLostException.class);
            Lease afresh = bounded.tryAcquire(forgotten, Duration.ofSeconds(10)).orElseThrow();
            assertThat(afresh.token()).as("forgotten: as for a fresh client without a floor").isEqualTo(1);
            afresh.release();
        } finally {
            resources.forEach(store::forget); // only this test's keys: the server may be shared
        }
        assertThat(RedisLeaseStore.DEFAULT_TOKENS_REMEMBERED).isEqualTo(10_000);
        assertThatThrownBy(() -> RedisLeaseStore.builder(TestRedis.uri()).tokensRemembered(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    /** The caller's retry: the first command on a connection to a restarted server may find it reset. */
    private static <T> T afterReconnect(java.util.function.Supplier<T> call) {
        java.util.concurrent.atomic.AtomicReference<T> answer = new java.util.concurrent.atomic.AtomicReference<>();
        await("an answer from the restarted server").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .ignoreException(StoreUnavailableException.class).until(() -> {
                    answer.set(call.get());
                    return true;
                });
        return answer.get();
    }

    @Test
    void raiseCounterNeverLowersIt() {
        String resource = freshResource();
        assertThat(store.raiseCounter(resource, 32)).isEqualTo(32);
        assertThat(store.raiseCounter(resource, 10)).isEqualTo(32);
        Lease lease = store.tryAcquire(resource, Duration.ofSeconds(10)).orElseThrow();
        assertThat(lease.token()).isEqualTo(33);
        assertThat(store.inspect(resource).holder()).isEqualTo(lease.ownerId());
        assertThat(store.inspect(resource).counter()).isEqualTo(33);
        lease.release();
        assertThat(store.inspect(resource).holder()).isNull();
    }

    @Test
    void passwordAndAclUsersAuthenticateAndWrongPasswordsAreReportedWithoutTheSecret() {
        try (EmbeddedRedis redis = EmbeddedRedis.start("s3cret-pass")) {
            try (RedisLeaseStore withPassword = RedisLeaseStore.builder(redis.uri()).build()) {
                withPassword.tryAcquire(freshResource(), Duration.ofSeconds(5)).orElseThrow().release();
            }
            RedisClient client = RedisClient.create(redis.uri());
            try (StatefulRedisConnection<String, String> connection = client.connect()) {
                connection.sync().aclSetuser("settler", io.lettuce.core.AclSetuserArgs.Builder.on()
                        .addPassword("acl-s3cret").allKeys().allCommands());
            } finally {
                client.shutdown();
            }
            try (RedisLeaseStore aclUser = RedisLeaseStore.builder("redis://settler:acl-s3cret@127.0.0.1:" + redis.port()).build()) {
                aclUser.tryAcquire(freshResource(), Duration.ofSeconds(5)).orElseThrow().release();
            }
            String wrong = "redis://settler:not-the-pass@127.0.0.1:" + redis.port();
            assertThatThrownBy(() -> RedisLeaseStore.builder(wrong).build())
                    .isInstanceOf(StoreAuthenticationException.class)
                    .hasMessageNotContaining("not-the-pass")
                    .hasMessageContaining("127.0.0.1:" + redis.port());
        }
    }

    @Test
    void anUnreachableRedisIsReportedNamingTheServerButNotThePassword() {
        assertThatThrownBy(() -> RedisLeaseStore.builder("redis://:hunter2@127.0.0.1:1").commandTimeout(Duration.ofSeconds(2)).build())
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining("127.0.0.1:1")
                .hasMessageNotContaining("hunter2");
    }

    @Test
    void malformedUrlsAreRejected() {
        assertThatThrownBy(() -> RedisLeaseStore.builder("http://localhost:6379").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("redis://");
        assertThatThrownBy(() -> RedisLeaseStore.builder("").build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RedisLeaseStore.builder("redis://:pw@host:notaport").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageNotContaining(":pw@");
    }

    /** A malformed URL is told the form of its own scheme, not the plain redis:// one. */
    @Test
    void aMalformedUrlIsToldTheFormOfItsScheme() {
        assertThatThrownBy(() -> RedisLeaseStore.builder("redis-sentinel://127.0.0.1:6379").build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("malformed Redis Sentinel URL redis-sentinel://127.0.0.1:6379: expected"
                        + " redis-sentinel://[password@]host:port[,host:port]#master");
        assertThatThrownBy(() -> RedisLeaseStore.builder("rediss-cluster://127.0.0.1:notaport").build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expected rediss-cluster://[user:password@]host:port[,host:port...]");
        assertThatThrownBy(() -> RedisLeaseStore.builder("rediss://:pw@127.0.0.1:notaport").build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expected rediss://[user:password@]host[:port][/db]");
    }

    /** The Sentinel form the message gives, with several Sentinels, is a URL the store takes: it gets as far as connecting. */
    @Test
    void severalSentinelsAreOneUrl() {
        assertThatThrownBy(() -> RedisLeaseStore.builder("redis-sentinel://127.0.0.1:1,127.0.0.1:2#mymaster").commandTimeout(Duration.ofSeconds(2))
                .build()).isInstanceOf(StoreUnavailableException.class).hasMessageContaining("redis-sentinel://127.0.0.1:1,127.0.0.1:2");
    }
}
