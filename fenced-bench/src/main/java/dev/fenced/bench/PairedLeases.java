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
 * compare-and-delete, no token) and against a bare script of SET NX PX and INCR, interleaved:
 * blocks of {@value #BLOCK} cycles per thread in the order fenced, bare script, floor, floor, bare
 * script, fenced, with every thread on the same side at once, so that all meet the same noise. The
 * JMH table beside it runs each variant on its own.
 */
final class PairedLeases {
    private static final int BLOCK = 100;

    private PairedLeases() {
    }

    /**
     * The two commands of fenced's usual path in a script of their own, with nothing else: what
     * one script with a token costs, apart from the library around it and its counter checks.
     */
    private static final String BARE_SCRIPT = """
            if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
              return 0
            end
            return redis.call('INCR', KEYS[2])
            """;

    static String run(String redisUrl, boolean quick) throws InterruptedException {
        int rounds = quick ? 10 : 80;
        StringBuilder out = new StringBuilder("## Acquire + token + release: fenced against the floor, interleaved\n\n")
                .append("| threads | side | cycles/s | time per cycle vs the floor | median round | middle half of the rounds |\n")
                .append("|---:|---|---:|---:|---:|---:|\n");
        RedisClient client = RedisClient.create(redisUrl);
        // Every side on one connection: two identical floor loops on two connections differ by 4 to
        // 20 % here, by which event-loop thread serves each; that is not what is compared.
        try (StatefulRedisConnection<String, String> connection = client.connect();
             RedisLeaseStore fenced = RedisLeaseStore.builder(connection).build()) {
            RedisCommands<String, String> commands = connection.sync();
            String cadSha = commands.scriptLoad(LeaseBench.CAD);
            String bareSha = commands.scriptLoad(BARE_SCRIPT);
            for (int threads : List.of(1, 8)) {
                List<String> names = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    names.add("bench:" + UUID.randomUUID());
                }
                Side fencedSide = thread -> {
                    Lease lease = fenced.tryAcquire(names.get(thread), Duration.ofSeconds(30)).orElseThrow();
                    lease.release();
                };
                Side bareScriptSide = thread -> {
                    String key = "lock:{" + names.get(thread) + "}";
                    String owner = UUID.randomUUID().toString();
                    Long token = commands.evalsha(bareSha, ScriptOutputType.INTEGER,
                            new String[] {key, "fence:{" + names.get(thread) + "}"}, owner, "30000");
                    if (token == null || token == 0) {
                        throw new IllegalStateException("lease not granted");
                    }
                    commands.evalsha(cadSha, ScriptOutputType.INTEGER, new String[] {key}, owner);
                };
                Side floorSide = thread -> {
                    String key = "lock:{" + names.get(thread) + "}";
                    String owner = UUID.randomUUID().toString();
                    if (!"OK".equals(commands.set(key, owner, SetArgs.Builder.nx().px(30_000)))) {
                        throw new IllegalStateException("lease not granted");
                    }
                    commands.evalsha(cadSha, ScriptOutputType.INTEGER, new String[] {key}, owner);
                };
                out.append(measure(threads, rounds, fencedSide, bareScriptSide, floorSide));
            }
        } finally {
            client.shutdown();
        }
        return out.append("\nBlocks of ").append(BLOCK).append(" cycles per thread in the order fenced, bare script, floor, floor,")
                .append(" bare script, fenced per round, ").append(rounds).append(" rounds after ").append(rounds / 5)
                .append(" of warm-up; one connection for all three. The bare script is `SET NX PX` and `INCR` in a script")
                .append(" of their own, released like the floor: the price of one script with a token, apart from the library.\n\n")
                .toString();
    }

    @FunctionalInterface
    private interface Side {
        void cycle(int thread);
    }

    private static String measure(int threads, int rounds, Side fenced, Side bareScript, Side floor) throws InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int i = 0; i < rounds / 5; i++) {
                block(pool, threads, fenced);
                block(pool, threads, bareScript);
                block(pool, threads, floor);
            }
            long[] nanos = new long[3];
            List<List<Double>> ratios = List.of(new ArrayList<>(), new ArrayList<>());
            for (int i = 0; i < rounds; i++) {
                long f = block(pool, threads, fenced);
                long s = block(pool, threads, bareScript);
                long b = block(pool, threads, floor);
                b += block(pool, threads, floor);
                s += block(pool, threads, bareScript);
                f += block(pool, threads, fenced);
                nanos[0] += f;
                nanos[1] += s;
                nanos[2] += b;
                ratios.get(0).add((double) f / b);
                ratios.get(1).add((double) s / b);
            }
            double cycles = rounds * 2.0 * BLOCK * threads;
            StringBuilder rows = new StringBuilder();
            String[] sides = {"fenced", "bare script", "floor"};
            for (int side = 0; side < 3; side++) {
                String spread = "1.000x | "; // the floor against itself
                if (side < 2) {
                    List<Double> sorted = ratios.get(side);
                    Collections.sort(sorted);
                    spread = String.format("%.3fx | %.2fx to %.2fx", sorted.get(rounds / 2), sorted.get(rounds / 4), sorted.get(rounds * 3 / 4));
                }
                rows.append(String.format("| %d | %s | %,.0f | %.3fx | %s |%n", threads, sides[side], cycles / (nanos[side] / 1e9),
                        (double) nanos[side] / nanos[2], spread));
            }
            return rows.toString();
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
