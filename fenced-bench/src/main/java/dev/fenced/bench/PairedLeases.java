package dev.fenced.bench;

import dev.fenced.Lease;
import dev.fenced.redis.RedisLeaseStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Acquire + token + release, fenced's one script against the floor (SET NX PX and
 * compare-and-delete, no token), interleaved: blocks of {@value #BLOCK} cycles per thread in the
 * order fenced, floor, floor, fenced, with every thread on the same side at once, so that both
 * sides meet the same noise. The JMH table beside it runs each variant on its own.
 */
final class PairedLeases {
    private static final int BLOCK = 100;

    private PairedLeases() {
    }

    static String run(String redisUrl, boolean quick) throws InterruptedException {
        int rounds = quick ? 10 : 80;
        StringBuilder out = new StringBuilder("## Acquire + token + release: fenced against the floor, interleaved\n\n")
                .append("| threads | fenced cycles/s | floor cycles/s | time per cycle vs the floor | median round | middle half of the rounds |\n")
                .append("|---:|---:|---:|---:|---:|---:|\n");
        RedisClient client = RedisClient.create(redisUrl);
        // Both sides on one connection: two identical floor loops on two connections differ by 4 to
        // 12 % here, by which event-loop thread serves each; that is not what is compared.
        try (StatefulRedisConnection<String, String> connection = client.connect();
             RedisLeaseStore fenced = RedisLeaseStore.builder(connection).build()) {
            RedisCommands<String, String> commands = connection.sync();
            String cadSha = commands.scriptLoad(LeaseBench.CAD);
            for (int threads : List.of(1, 8)) {
                List<String> names = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    names.add("bench:" + UUID.randomUUID());
                }
                Side fencedSide = thread -> {
                    Lease lease = fenced.tryAcquire(names.get(thread), Duration.ofSeconds(30)).orElseThrow();
                    lease.release();
                };
                Side floorSide = thread -> {
                    String key = "lock:{" + names.get(thread) + "}";
                    String owner = UUID.randomUUID().toString();
                    if (!"OK".equals(commands.set(key, owner, SetArgs.Builder.nx().px(30_000)))) {
                        throw new IllegalStateException("lease not granted");
                    }
                    commands.evalsha(cadSha, ScriptOutputType.INTEGER, new String[] {key}, owner);
                };
                out.append(measure(threads, rounds, fencedSide, floorSide));
            }
        } finally {
            client.shutdown();
        }
        return out.append("\nBlocks of ").append(BLOCK).append(" cycles per thread, fenced, floor, floor, fenced per round, ")
                .append(rounds).append(" rounds after ").append(rounds / 5).append(" of warm-up; one connection shared by both sides.\n\n")
                .toString();
    }

    @FunctionalInterface
    private interface Side {
        void cycle(int thread);
    }

    private static String measure(int threads, int rounds, Side fenced, Side floor) throws InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int i = 0; i < rounds / 5; i++) {
                block(pool, threads, fenced);
                block(pool, threads, floor);
            }
            long fencedNanos = 0;
            long floorNanos = 0;
            List<Double> ratios = new ArrayList<>();
            for (int i = 0; i < rounds; i++) {
                long f = block(pool, threads, fenced);
                long b = block(pool, threads, floor);
                b += block(pool, threads, floor);
                f += block(pool, threads, fenced);
                fencedNanos += f;
                floorNanos += b;
                ratios.add((double) f / b);
            }
            Collections.sort(ratios);
            double cycles = rounds * 2.0 * BLOCK * threads;
            return String.format("| %d | %,.0f | %,.0f | %.3fx | %.3fx | %.2fx to %.2fx |%n", threads, cycles / (fencedNanos / 1e9),
                    cycles / (floorNanos / 1e9), (double) fencedNanos / floorNanos, ratios.get(rounds / 2), ratios.get(rounds / 4),
                    ratios.get(rounds * 3 / 4));
        } finally {
            pool.shutdownNow();
        }
    }

    /** Every thread runs one block of the side; returns the wall time until the last one finished. */
    private static long block(ExecutorService pool, int threads, Side side) throws InterruptedException {
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            int thread = t;
            pool.execute(() -> {
                try {
                    start.await();
                    for (int i = 0; i < BLOCK; i++) {
                        side.cycle(thread);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    done.countDown();
                }
            });
        }
        long begin = System.nanoTime();
        start.countDown();
        done.await();
        return System.nanoTime() - begin;
    }
}
