package dev.fenced.lab;

import dev.fenced.cli.DurationConverter;
import dev.fenced.cli.EventLine;
import dev.fenced.cli.EventLines;
import dev.fenced.cli.Connections;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.jdbc.JdbcTokenSource;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.SettlementOutcome;
import dev.fenced.settlement.SettlementWorker;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** A long-lived worker for {@code fenced chaos}: settles each merchant id read from stdin, until stdin closes. */
@Command(name = "chaos-worker", hidden = true, description = "Settle the merchants named on stdin, one per line; for fenced chaos.")
final class ChaosWorkerCommand implements Callable<Integer> {
    @Option(names = "--name", required = true)
    String name;

    @Option(names = "--ttl", defaultValue = "2s", converter = DurationConverter.class)
    Duration ttl;

    @Option(names = "--concurrency", defaultValue = "2")
    int concurrency;

    @Option(names = "--jobs", defaultValue = "2", description = "merchants settled at once, as a queue consumer with several messages in flight")
    int jobs;

    @Option(names = "--no-fence")
    boolean noFence;

    @Option(names = "--db-tokens", description = "issue tokens from the database counter table; Redis keeps only the lease")
    boolean dbTokens;

    @Mixin
    Connections connections;

    @Override
    public Integer call() throws Exception {
        String redisUrl = Connections.require(connections.redisUrl, "--redis-url", "FENCED_REDIS_URL");
        String dbUrl = Connections.require(connections.dbUrl, "--db-url", "FENCED_DB_URL");
        String gatewayUrl = Connections.require(connections.gatewayUrl, "--gateway-url", "FENCED_GATEWAY_URL");
        BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (HikariDataSource db = Connections.database(dbUrl, concurrency + 2);
             RedisLeaseStore leases = dbTokens
                     ? RedisLeaseStore.builder(redisUrl).ownerLabel("chaos-" + name).tokenSource(JdbcTokenSource.of(db)).build()
                     : Connections.leases(redisUrl, db, "chaos-" + name)) {
            ExecutorService pool = Executors.newFixedThreadPool(jobs);
            for (int i = 0; i < jobs; i++) {
                ready();
            }
            String line;
            while ((line = input.readLine()) != null) {
                String job = line.trim();
                pool.execute(() -> {
                    SettlementOutcome outcome;
                    try {
                        outcome = SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(Connections.gateway(gatewayUrl))
                                .ttl(ttl).concurrency(concurrency).variant(LabVariants.of(!noFence, true, false)).name(name)
                                .listener(event -> EventLines.event(event, job)).build().settle(job);
                    } catch (RuntimeException e) {
                        outcome = SettlementOutcome.failedToStart(job, e.getMessage());
                    }
                    EventLines.result(outcome, name);
                    ready();
                });
            }
            pool.shutdown();
            pool.awaitTermination(5, TimeUnit.MINUTES);
        }
        return 0;
    }

    /** One more job this worker can take. */
    private void ready() {
        EventLines.emit(new EventLine.Ready(name, System.currentTimeMillis()));
    }
}
