package dev.fenced.bench;

import dev.fenced.Lease;
import dev.fenced.embedded.EmbeddedRedisCluster;
import dev.fenced.redis.RedisKeys;
import dev.fenced.redis.RedisLeaseStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Acquire + token + release, fenced against the floor (SET NX PX and compare-and-delete, no token)
 * and against a bare script of SET NX PX and INCR, interleaved cycle by cycle: every thread runs
 * one cycle of fenced, bare script, floor, floor, bare script, fenced, over and over, and times each
 * cycle, so that the three sides meet the same noise to within a few hundred microseconds. The
 * rounds are cut into {@value #BATCHES} batches; the spread of the batch ratios gives the interval.
 * The JMH table beside it runs each variant on its own.
 */
final class PairedLeases {
    private static final int BATCHES = 20;
    /** Also in quick mode: with fewer, the 1-thread fenced side still ran partly interpreted (1.2x). */
    private static final int WARM_UP_ROUNDS = 2_000;
    /** Indexed like every per-side array below. */
    private static final String[] SIDES = {"fenced", "bare script", "floor"};

    private PairedLeases() {
    }

    /**
     * A lease and a token in one script on the floor's string lease, with nothing else: what taking
     * the token inside a script costs over the floor, apart from the library and its counter checks.
     */
    private static final String BARE_SCRIPT = """
            if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
              return 0
            end
            return redis.call('INCR', KEYS[2])
            """;

    static String run(String redisUrl, boolean quick) throws InterruptedException {
        int rounds = quick ? 600 : 10_000;
        StringBuilder out = new StringBuilder("## Acquire + token + release: fenced against the floor, interleaved\n\n");
        String redisCpu;
        RedisClient client = RedisClient.create(redisUrl);
        Config config = new Config();
        config.useSingleServer().setAddress(redisUrl).setConnectionMinimumIdleSize(8).setConnectionPoolSize(16);
        RedissonClient redisson = Redisson.create(config);
        // Every side on one connection: two identical floor loops on two connections differ by 4 to
        // 20 % here, by which event-loop thread serves each; that is not what is compared.
        try (StatefulRedisConnection<String, String> connection = client.connect();
             RedisLeaseStore fenced = RedisLeaseStore.builder(connection).build()) {
            redisCpu = table(out, connection.sync(), fenced, redisson, rounds, quick);
        } finally {
            client.shutdown();
            redisson.shutdown();
        }
        out.append("\nEach thread runs ").append(rounds).append(" rounds (after ").append(WARM_UP_ROUNDS)
                .append(" of warm-up) of one cycle each of fenced, bare script, Redisson, floor, floor, Redisson, bare script, fenced;")
                .append(" one Lettuce connection for fenced, the bare script and the floor, Redisson's own pool (8 to 16 connections) for")
                .append(" its `RFencedLock` (`tryLockAndGetToken`, `unlock`). The interval is the mean of the ").append(BATCHES).append(" batch ratios ± 2 standard errors.")
                .append(" The bare script is `SET NX PX` and `INCR` in a script of their own, released like the floor: one script")
                .append(" with a token on the floor's string lease, apart from the library.\n\n");
        return out.append("| side | Redis CPU per cycle | vs the floor |\n|---|---:|---:|\n").append(redisCpu)
                .append("\nThe Redis server's own CPU time (`INFO cpu`, user + system) per acquire + token + release, each side run")
                .append(" alone on 1 thread in the order floor, bare script, fenced, fenced, bare script, floor: the work each")
                .append(" cycle leaves on a Redis that many workers share.\n\n").toString();
    }

    /** The same interleaved table on an embedded Redis Cluster of 3 primaries and 3 replicas, every side on one cluster connection. */
    static String runOnCluster(boolean quick) throws InterruptedException {
        int rounds = quick ? 600 : 10_000;
        StringBuilder out = new StringBuilder("## Acquire + token + release on a Redis Cluster: fenced against the floor, interleaved\n\n");
        try (EmbeddedRedisCluster cluster = EmbeddedRedisCluster.start()) {
            RedisClusterClient client = RedisClusterClient.create(
                    cluster.ports().subList(0, 3).stream().map(port -> RedisURI.create("127.0.0.1", port)).toList());
            Config config = new Config();
            config.useClusterServers().addNodeAddress(cluster.ports().subList(0, 3).stream().map(port -> "redis://127.0.0.1:" + port)
                    .toArray(String[]::new));
            RedissonClient redisson = Redisson.create(config);
            try (StatefulRedisClusterConnection<String, String> connection = client.connect();
                 RedisLeaseStore fenced = RedisLeaseStore.builder(connection).build()) {
                table(out, connection.sync(), fenced, redisson, rounds, false);
            } finally {
                client.shutdown();
                redisson.shutdown();
            }
        }
        return out.append("\nAn embedded cluster (3 primaries, 3 replicas, real `redis-server` processes on this machine) and one cluster")
                .append(" connection for fenced, the bare script and the floor (Redisson its own cluster client); each thread's resource lives on the node its hash tag names, the same")
                .append(" node for the three sides. Otherwise as the table above.\n\n").toString();
    }

    /** Appends the interleaved rows for 1 and 8 threads; returns the Redis CPU rows when asked (one server only). */
    private static String table(StringBuilder out, RedisClusterCommands<String, String> commands, RedisLeaseStore fenced,
                                RedissonClient redisson, int rounds, boolean quickCpu) throws InterruptedException {
        out.append("| threads | side | cycles/s | time per cycle vs the floor | 95 % interval |\n")
                .append("|---:|---|---:|---:|---:|\n");
        String redisCpu = "";
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
                String key = RedisKeys.DEFAULT.lockKey(names.get(thread));
                String owner = UUID.randomUUID().toString();
                Long token = commands.evalsha(bareSha, ScriptOutputType.INTEGER,
                        new String[] {key, RedisKeys.DEFAULT.fenceKey(names.get(thread))}, owner, "30000");
                if (token == null || token == 0) {
                    throw new IllegalStateException("lease not granted");
                }
                commands.evalsha(cadSha, ScriptOutputType.INTEGER, new String[] {key}, owner);
            };
            Side floorSide = thread -> {
                String key = RedisKeys.DEFAULT.lockKey(names.get(thread));
                String owner = UUID.randomUUID().toString();
                if (!"OK".equals(commands.set(key, owner, SetArgs.Builder.nx().px(30_000)))) {
                    throw new IllegalStateException("lease not granted");
                }
                commands.evalsha(cadSha, ScriptOutputType.INTEGER, new String[] {key}, owner);
            };
            List<String> sideNames = new ArrayList<>(List.of("fenced", "bare script"));
            List<Side> sides = new ArrayList<>(List.of(fencedSide, bareScriptSide));
            if (redisson != null) {
                List<RFencedLock> locks = names.stream().map(name -> redisson.getFencedLock("redisson:" + name)).toList();
                sideNames.add("Redisson RFencedLock");
                sides.add(thread -> {
                    RFencedLock lock = locks.get(thread);
                    if (lock.tryLockAndGetToken() == null) {
                        throw new IllegalStateException("lock not granted");
                    }
                    lock.unlock();
                });
            }
            sideNames.add("floor");
            sides.add(floorSide);
            out.append(measure(threads, rounds, sideNames, sides));
            if (threads == 1 && commands instanceof RedisCommands<String, String> one) {
                redisCpu = redisCpuPerCycle(one, quickCpu ? 2_000 : 20_000, fencedSide, bareScriptSide, floorSide);
            }
        }
        return redisCpu;
    }

    private static String redisCpuPerCycle(RedisCommands<String, String> commands, int cycles, Side fenced, Side bareScript, Side floor) {
        Side[] order = {floor, bareScript, fenced, fenced, bareScript, floor};
        int[] sideOf = {2, 1, 0, 0, 1, 2};
        double[] seconds = new double[3];
        for (int i = 0; i < order.length; i++) {
            double before = redisCpuSeconds(commands);
            for (int cycle = 0; cycle < cycles; cycle++) {
                order[i].cycle(0);
            }
            seconds[sideOf[i]] += redisCpuSeconds(commands) - before;
        }
        StringBuilder rows = new StringBuilder();
        for (int side = 0; side < 3; side++) {
            rows.append(String.format("| %s | %.1f us | %.2fx |%n", SIDES[side], seconds[side] * 1e6 / (2.0 * cycles), seconds[side] / seconds[2]));
        }
        return rows.toString();
    }

    private static double redisCpuSeconds(RedisCommands<String, String> commands) {
        double seconds = 0;
        for (String line : commands.info("cpu").split("\r?\n")) {
            if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
                seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return seconds;
    }

    /** One acquire + token + release on the calling thread's resource. */
    @FunctionalInterface
    interface Side {
        void cycle(int thread);
    }

    private static String measure(int threads, int rounds, List<String> names, List<Side> sides) throws InterruptedException {
        return measure(threads, WARM_UP_ROUNDS, rounds, names, sides);
    }

    /**
     * Interleaves the sides cycle by cycle (first to last, then last to first); the last side is the
     * baseline the others are compared with. One table row per side.
     */
    static String measure(int threads, int warmUpRounds, int rounds, List<String> names, List<Side> sides) throws InterruptedException {
        int n = sides.size();
        int floorSide = n - 1;
        Side[] order = new Side[2 * n];
        int[] sideOf = new int[2 * n];
        for (int i = 0; i < n; i++) {
            order[i] = sides.get(i);
            sideOf[i] = i;
            order[2 * n - 1 - i] = sides.get(i);
            sideOf[2 * n - 1 - i] = i;
        }
        long[][][] nanos = new long[threads][BATCHES][n]; // thread, batch, side
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> runs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                runs.add(pool.submit(() -> {
                    start.await();
                    for (int round = -warmUpRounds; round < rounds; round++) {
                        for (int i = 0; i < order.length; i++) {
                            long begin = System.nanoTime();
                            order[i].cycle(thread);
                            long elapsed = System.nanoTime() - begin;
                            if (round >= 0) {
                                nanos[thread][(int) ((long) round * BATCHES / rounds)][sideOf[i]] += elapsed;
                            }
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> run : runs) {
                run.get();
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("a lease cycle failed", e.getCause());
        } finally {
            pool.shutdownNow();
        }
        long[] total = new long[n];
        double[][] batchRatios = new double[n][BATCHES];
        for (int batch = 0; batch < BATCHES; batch++) {
            long[] sum = new long[n];
            for (int thread = 0; thread < threads; thread++) {
                for (int side = 0; side < n; side++) {
                    sum[side] += nanos[thread][batch][side];
                }
            }
            for (int side = 0; side < n; side++) {
                total[side] += sum[side];
                batchRatios[side][batch] = (double) sum[side] / sum[floorSide];
            }
        }
        double cyclesPerSide = 2.0 * rounds * threads;
        StringBuilder rows = new StringBuilder();
        for (int side = 0; side < n; side++) {
            // Each side's cycles/s as if it ran alone on all threads: its cycles over its share of the time.
            double seconds = total[side] / 1e9 / threads;
            String interval = side < floorSide ? interval(batchRatios[side]) : "";
            rows.append(String.format("| %d | %s | %,.0f | %.3fx | %s |%n", threads, names.get(side), cyclesPerSide / seconds,
                    (double) total[side] / total[floorSide], interval));
        }
        return rows.toString();
    }

    private static String interval(double[] ratios) {
        double mean = Arrays.stream(ratios).average().orElseThrow();
        double variance = Arrays.stream(ratios).map(r -> (r - mean) * (r - mean)).sum() / (ratios.length - 1);
        double twoStandardErrors = 2 * Math.sqrt(variance / ratios.length);
        return String.format("%.3fx to %.3fx", mean - twoStandardErrors, mean + twoStandardErrors);
    }
}
