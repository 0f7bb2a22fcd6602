package dev.fenced.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.Lease;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.jdbc.JdbcTokenSource;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
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

/**
 * The price of surviving Redis data loss: a lease whose token Redis issues, against one whose token
 * PostgreSQL issues from a counter row or from a sequence.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Benchmark)
public class TokenSourceBench {
    private RedisLeaseStore redisTokens;
    private RedisLeaseStore databaseTokens;
    private RedisLeaseStore sequenceTokens;
    private HikariDataSource dataSource;
    private final String resource = "bench-tokens:" + UUID.randomUUID();

    @Setup(Level.Trial)
    public void connect() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(BenchServers.postgres());
        config.setMaximumPoolSize(2);
        dataSource = new HikariDataSource(config);
        FencedSchema.migrate(dataSource);
        redisTokens = RedisLeaseStore.builder(BenchServers.redis()).build();
        databaseTokens = RedisLeaseStore.builder(BenchServers.redis()).tokens(TokenPolicy.durable(JdbcTokenSource.of(dataSource))).build();
        sequenceTokens = RedisLeaseStore.builder(BenchServers.redis()).tokens(TokenPolicy.durable(JdbcSequenceTokenSource.of(dataSource))).build();
    }

    @Benchmark
    public long redisIssuedToken() {
        Lease lease = redisTokens.tryAcquire(resource + ":redis", Duration.ofSeconds(30)).orElseThrow();
        lease.release();
        return lease.token();
    }

    @Benchmark
    public long databaseIssuedToken() {
        Lease lease = databaseTokens.tryAcquire(resource + ":db", Duration.ofSeconds(30)).orElseThrow();
        lease.release();
        return lease.token();
    }

    @Benchmark
    public long databaseSequenceToken() {
        Lease lease = sequenceTokens.tryAcquire(resource + ":seq", Duration.ofSeconds(30)).orElseThrow();
        lease.release();
        return lease.token();
    }

    @TearDown(Level.Trial)
    public void close() {
        redisTokens.close();
        databaseTokens.close();
        sequenceTokens.close();
        dataSource.close();
    }
}
