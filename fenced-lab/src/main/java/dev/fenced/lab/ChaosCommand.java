package dev.fenced.lab;

import dev.fenced.cli.FencedCli;
import dev.fenced.cli.UsageException;
import dev.fenced.cli.DurationConverter;
import dev.fenced.cli.Connections;
import dev.fenced.cli.LeaseBackend;
import dev.fenced.cli.Progress;
import dev.fenced.embedded.MovableClockRedis;
import dev.fenced.embedded.PostgresPair;
import dev.fenced.cli.ProgressOptions;
import dev.fenced.fleet.Broker;
import dev.fenced.fleet.FleetWorker;
import dev.fenced.redis.TokenIssuer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "chaos", mixinStandardHelpOptions = true,
        description = {"Settle many merchants with fleet worker processes while faults strike, then check exactly-once.",
                "The workers are fed by NATS JetStream (one job per merchant on a stream of the run's own); the faults strike on a"
                        + " seeded schedule; exactly-once is checked from the gateway's ledger, the database, every worker's history"
                        + " and the stream: every job acked or dead-lettered.",
                "Runs on embedded servers it can break: a Redis primary, replica and Sentinel (or, with --leases, no Redis: the leases"
                        + " in the PostgreSQL, or in a three-member etcd), a PostgreSQL, and a nats-server unless --nats-url names one"
                        + " (never with nats-restart, which restarts the run's own).",
                "Exit code 1 on any violation; with --no-fence or --trust-keys, a run that finds none says it proved nothing."})
final class ChaosCommand implements Callable<Integer> {
    @Option(names = "--merchants", defaultValue = "20", description = "(default ${DEFAULT-VALUE})")
    int merchants;

    @Option(names = "--refunds", defaultValue = "100", description = "refunds per merchant (default ${DEFAULT-VALUE})")
    int refunds;

    @Option(names = "--workers", defaultValue = "4", description = "worker processes (default ${DEFAULT-VALUE})")
    int workers;

    @Option(names = "--jobs", defaultValue = "3", description = "jobs (merchants) each worker settles at once (default ${DEFAULT-VALUE})")
    int jobs;

    @Option(names = "--concurrency", defaultValue = "2", description = "refunds in flight per job (default ${DEFAULT-VALUE})")
    int concurrency;

    @Option(names = "--gateway-latency", defaultValue = "50ms", converter = DurationConverter.class, description = "(default ${DEFAULT-VALUE})")
    Duration gatewayLatency;

    @Option(names = "--duration", defaultValue = "60s", converter = DurationConverter.class, description = "how long faults strike (default ${DEFAULT-VALUE})")
    Duration duration;

    @Option(names = "--ttl", defaultValue = "2s", converter = DurationConverter.class, description = "lease TTL (default ${DEFAULT-VALUE})")
    Duration ttl;

    @Option(names = "--seed", description = "seed of the fault schedule (default: random, printed)")
    Long seed;

    @Option(names = "--faults", split = ",", description = "of: pause, kill, redis-restart, flushall, failover, lagging-failover,"
            + " cluster-failover (the lagging failover of a Redis Cluster's primary: the run's Redis is then a Cluster; not with the"
            + " four before it), db-kill, gateway, gateway-outage, gateway-restart, key-reuse, nats-restart, stalled-claim (a worker"
            + " frozen inside its claim transaction, its rows locked), etcd-leader-kill (SIGKILL of the etcd leader, back after 2 s;"
            + " with --leases etcd), provider-news (refunds settle a second after acceptance, a tenth fail late; the gateway's"
            + " signed webhooks, a fifth each lost, duplicated and reordered, go to a receiver on the run's database, and a poll"
            + " after the drain finds the rest), key-expiry (on its own, one refund in flight per job: the gateway keeps keys 36 s, loses its answers"
            + " for a second and answers no lookup from then until 38 s after, and the workers must find those refunds by"
            + " reference, not send them again)"
            + ", clock-jump (the run's Redis is one server under libfaketime, not with the four Sentinel faults or cluster-failover:"
            + " its clock steps forward past every lease and a second job is published for a merchant a worker holds, an early"
            + " takeover; needs Debian's faketime), partition-redis, partition-db, partition-gateway, partition-nats (a worker's link"
            + " to that server cut silently, packets dropped, one way or both, for 1.5 to 3.5 TTLs; from Redis, with a second job"
            + " for a merchant it holds), isolate (every link of a worker cut both ways); with any of these five each worker runs in"
            + " a network namespace of its own, which needs root and nftables, and the run starts a nats-server of its own"
            + " whatever --nats-url says (default: all that fit --leases but"
            + " cluster-failover, key-expiry, clock-jump and the partitions), db-failover (the run's PostgreSQL is a primary and a"
            + " synchronous streaming replica: the WAL sender is frozen and a holder paused, the primary crashes 3 TTLs later and the"
            + " replica is promoted, the workers follow through a URL naming both; the old primary comes back as the new replica;"
            + " needs the PostgreSQL server's binaries; --async-replication is its control)")
    List<String> faults;

    @Option(names = "--no-fence", description = "the negative control: the same run with fencing off must report violations")
    boolean noFence;

    @Option(names = "--trust-keys", description = "with --faults key-expiry, its negative control: the workers take the gateway's keys"
            + " to last a day, send the refunds whose answers were lost again under keys it forgot, and must pay twice")
    boolean trustKeys;

    @Option(names = "--async-replication", description = "with --faults db-failover, its negative control: the database's replica"
            + " streams asynchronously, so a promoted replica can lack fences the old primary acknowledged, and a stale holder's"
            + " writes are taken")
    boolean asyncReplication;

    @Option(names = "--keep-busy", description = "whenever every refund is settled and faults are left to strike, seed and publish"
            + " another round of --merchants new merchants of --refunds each: a long run's faults meet work all along")
    boolean keepBusy;

    @Option(names = "--tokens", defaultValue = "epochs", converter = Connections.TokensConverter.class, paramLabel = "epochs|redis|database",
            description = "who issues the workers' tokens (default ${DEFAULT-VALUE}); with redis, a failover to a lagging replica can"
                    + " repeat a token, which the checker counts as a violation: the negative control of epochs")
    TokenIssuer tokens;

    @Option(names = "--leases", defaultValue = "redis", converter = LeaseBackend.Converter.class, paramLabel = "redis|database|etcd",
            description = "where the workers' leases live (default ${DEFAULT-VALUE}): a Redis primary, replica and Sentinel; the run's"
                    + " PostgreSQL; or a three-member etcd (etcd-leader-kill strikes it). --tokens goes with redis only")
    LeaseBackend leases;

    @Option(names = "--nats-url", paramLabel = "URL", defaultValue = "${env:FENCED_NATS_URL}",
            description = "NATS with JetStream for the jobs (env FENCED_NATS_URL; default: a nats-server of the run's own, always with nats-restart)")
    String natsUrl;

    @Option(names = "--history", paramLabel = "FILE", description = "write every worker event, as JSON lines, for replay")
    Path history;

    @Option(names = "--json", description = "print one JSON document")
    boolean json;

    @Mixin
    ProgressOptions progressOptions;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (merchants < 1 || merchants > 1000 || refunds < 1 || refunds > 10_000 || workers < 1 || workers > 32
                || jobs < 1 || jobs > FleetWorker.MAX_JOBS || concurrency < 1 || concurrency > 64) {
            throw new UsageException("--merchants 1..1000, --refunds 1..10000, --workers 1..32, --jobs 1.." + FleetWorker.MAX_JOBS
                    + " and --concurrency 1..64, got " + merchants + ", " + refunds + ", " + workers + ", " + jobs + ", " + concurrency);
        }
        Connections.requireUsableTtl(ttl);
        if (natsUrl != null && !natsUrl.isBlank()) {
            try {
                Broker.requireValidUrl(natsUrl);
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
        }
        if (leases != LeaseBackend.REDIS && spec.commandLine().getParseResult().hasMatchedOption("--tokens")) {
            throw new UsageException("--tokens goes with --leases redis: " + leases.label() + " issues its own tokens");
        }
        Set<Fault> enabled = faults == null || faults.isEmpty() ? Fault.allFor(leases) : Fault.parse(faults, leases);
        if (enabled.contains(Fault.CLOCK_JUMP) && MovableClockRedis.libfaketime().isEmpty()) {
            throw new UsageException("clock-jump runs Redis under libfaketime, which is not installed (apt-get install faketime)");
        }
        if (Fault.partitioned(enabled)) {
            WorkerNetworks.unavailable().ifPresent(why -> {
                throw new UsageException("the partition faults run each worker in a network namespace: " + why);
            });
        }
        if (enabled.contains(Fault.KEY_EXPIRY)) {
            // A worker that stops for the gateway's failures puts the rows it claimed ahead back to pending, keeping their
            // first attempt: past their keys by the time lookups are back, they would be left for an operator.
            if (spec.commandLine().getParseResult().hasMatchedOption("--concurrency") && concurrency != 1) {
                throw new UsageException("key-expiry runs with --concurrency 1: rows claimed ahead and put back during the fault"
                        + " would be past their keys, left for an operator, got " + concurrency);
            }
            concurrency = 1;
        }
        if (asyncReplication && !enabled.contains(Fault.DB_FAILOVER)) {
            throw new UsageException("--async-replication is the control of --faults db-failover: name that fault");
        }
        if (enabled.contains(Fault.DB_FAILOVER) && PostgresPair.binaries().isEmpty()) {
            throw new UsageException("db-failover runs a PostgreSQL primary and replica from the server's own binaries, which are not"
                    + " installed (apt-get install postgresql)");
        }
        if (trustKeys && !enabled.contains(Fault.KEY_EXPIRY)) {
            throw new UsageException("--trust-keys is the control of --faults key-expiry: not without it");
        }
        long chosenSeed = seed != null ? seed : new java.security.SecureRandom().nextLong();
        ChaosSettings settings = new ChaosSettings(merchants, refunds, workers, jobs, concurrency, gatewayLatency, duration, ttl, chosenSeed,
                enabled, !noFence, tokens, history, natsUrl, leases, trustKeys, keepBusy, asyncReplication);
        ChaosReport report;
        // With keep-busy the rounds are told on stderr as they come; a count of the first round's refunds would stop at 100 %.
        try (Progress progress = keepBusy ? Progress.off() : progressOptions.start("chaos", ChaosHarness.refundsToSettle(settings), "refunds settled")) {
            report = new ChaosHarness(settings, json ? null : System.err, progress).run();
        }
        if (json) {
            System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report));
        } else {
            System.out.print(report.table());
        }
        if (!settings.safe()) {
            return 0;
        }
        return report.violations() == 0 ? 0 : FencedCli.RUNTIME_FAILURE;
    }
}
