package dev.fenced.lab;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.cli.Connections;
import dev.fenced.cli.EventLines;
import dev.fenced.cli.WorkerCommand;
import dev.fenced.jdbc.JdbcTokenSource;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.SettlementWorker;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The fleet's {@code worker} with the lab's knobs ({@link LabKnobs}), for the fleet's negative
 * controls and {@code fenced chaos}; with {@code --db-tokens}, tokens come from the database's
 * counter table and Redis keeps only the lease. Hidden.
 */
@Command(name = "lab-worker", hidden = true, description = "a fleet worker under a mechanism of the comparison, with breakpoints; for the lab")
final class LabWorkerCommand extends WorkerCommand {
    @Mixin
    LabKnobs knobs;

    @Option(names = "--db-tokens", description = "issue tokens from the database counter table; Redis keeps only the lease")
    boolean dbTokens;

    @Spec
    CommandSpec spec;

    private HikariDataSource tokenDb;
    private RedisLeaseStore dbTokenLeases;

    @Override
    public Integer call() {
        knobs.validate();
        try {
            return super.call();
        } finally {
            synchronized (this) {
                if (dbTokenLeases != null) {
                    dbTokenLeases.close();
                }
                if (tokenDb != null) {
                    tokenDb.close();
                }
            }
        }
    }

    @Override
    protected SettlementWorker.Builder adapt(SettlementWorker.Builder builder, String merchant) {
        if (dbTokens) {
            builder.leaseStore(dbTokenLeases());
        }
        return knobs.apply(builder, journal, name(), event -> EventLines.event(event, merchant));
    }

    /** Built at the first job, so that a usage error is found before anything connects; a failure fails that job only. */
    private synchronized RedisLeaseStore dbTokenLeases() {
        if (dbTokenLeases == null) {
            if (tokenDb == null) {
                tokenDb = Connections.database(spec.findOption("--db-url").getValue(), 3);
            }
            String redisUrl = spec.findOption("--redis-url").getValue();
            dbTokenLeases = RedisLeaseStore.builder(redisUrl)
                    .ownerLabel("worker-" + name().replaceAll("[^A-Za-z0-9_-]", "_")).tokenSource(JdbcTokenSource.of(tokenDb)).build();
        }
        return dbTokenLeases;
    }
}
