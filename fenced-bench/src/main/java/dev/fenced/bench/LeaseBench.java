package dev.fenced.bench;

import dev.fenced.Lease;
import dev.fenced.redis.RedisKeys;
import dev.fenced.redis.RedisLeaseStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** Acquire + token + release on one Redis: fenced's one script against the baselines, same run. */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class LeaseBench {
    static final String CAD = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

    /** The stores and connections every variant shares, made once per run. */
    @State(Scope.Benchmark)
    public static class Redis {
        RedisLeaseStore fenced;
        RedisClient client;
        StatefulRedisConnection<String, String> connection;
        RedisCommands<String, String> commands;
        String cadSha;
        RedissonClient redisson;

        @Setup(Level.Trial)
        public void connect() {
            client = RedisClient.create(BenchServers.redis());
            connection = client.connect();
            // One connection for fenced and the Lettuce baselines: which event-loop thread serves a
            // connection moves a loop by several percent on 2 cores, and is not what is compared.
            fenced = RedisLeaseStore.builder(connection).build();
            commands = connection.sync();
            cadSha = commands.scriptLoad(CAD);
            Config config = new Config();
            config.useSingleServer().setAddress(BenchServers.redis()).setConnectionMinimumIdleSize(8).setConnectionPoolSize(16);
            redisson = Redisson.create(config);
        }

        @TearDown(Level.Trial)
        public void close() {
            fenced.close();
            connection.close();
            client.shutdown();
            redisson.shutdown();
        }
    }

    /** A resource name of this thread's own, so that threads do not contend for one lease. */
    @State(Scope.Thread)
    public static class Resource {
        String name;
        String lockKey;
        String fenceKey;
        RFencedLock redissonLock;

        @Setup(Level.Trial)
        public void name(Redis redis) {
            name = "bench:" + UUID.randomUUID();
            lockKey = RedisKeys.DEFAULT.lockKey(name);
            fenceKey = RedisKeys.DEFAULT.fenceKey(name);
            redissonLock = redis.redisson.getFencedLock("redisson:" + name);
        }
    }

    /** fenced: lease and token in one script, compare-and-delete release. */
    @Benchmark
    public long fencedOneScript(Redis redis, Resource resource) {
        Lease lease = redis.fenced.tryAcquire(resource.name, Duration.ofSeconds(30)).orElseThrow();
        lease.release();
        return lease.token();
    }

    /** The article's two steps: SET NX PX, then INCR, then compare-and-delete. */
    @Benchmark
    public long articleTwoSteps(Redis redis, Resource resource) {
        String owner = UUID.randomUUID().toString();
        if (!"OK".equals(redis.commands.set(resource.lockKey, owner, SetArgs.Builder.nx().px(30_000)))) {
            throw new IllegalStateException("lease not granted");
        }
        long token = redis.commands.incr(resource.fenceKey);
        redis.commands.evalsha(redis.cadSha, ScriptOutputType.INTEGER, new String[] {resource.lockKey}, owner);
        return token;
    }

    /** The floor: what any lease costs, SET NX PX and compare-and-delete, no token. */
    @Benchmark
    public boolean floorSetNxNoToken(Redis redis, Resource resource) {
        String owner = UUID.randomUUID().toString();
        if (!"OK".equals(redis.commands.set(resource.lockKey, owner, SetArgs.Builder.nx().px(30_000)))) {
            throw new IllegalStateException("lease not granted");
        }
        Long deleted = redis.commands.evalsha(redis.cadSha, ScriptOutputType.INTEGER, new String[] {resource.lockKey}, owner);
        return deleted == 1;
    }

    /** Redisson's fencing lock: tryLockAndGetToken, then unlock. */
    @Benchmark
    public Long redissonFencedLock(Resource resource) {
        Long token = resource.redissonLock.tryLockAndGetToken();
        if (token == null) {
            throw new IllegalStateException("lock not granted");
        }
        resource.redissonLock.unlock();
        return token;
    }
}
