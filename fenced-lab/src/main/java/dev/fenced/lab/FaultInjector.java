package dev.fenced.lab;

import dev.fenced.embedded.EmbeddedEtcd;
import dev.fenced.embedded.MovableClockRedis;
import dev.fenced.embedded.ReplicatedRedis;
import io.lettuce.core.RedisClient;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Strikes the chaos run's faults on a schedule drawn from the seed: every 0.3 to 1.2 s one of the
 * enabled {@link Fault}s that strike at moments (a worker SIGSTOPped or SIGKILLed, the Redis
 * primary restarted, flushed or failed over, to a replica in sync or to one left behind for a few
 * seconds of grants, the database's connections killed, a worker frozen inside its claim transaction, the gateway down
 * or restarted, the run's {@code nats-server} restarted on its file storage, the gateway's answers
 * lost and its lookups down until past its key retention, Redis's clock stepped forward and a second
 * job published for a merchant a worker holds, a worker's link to one server or to all of them cut
 * silently and healed after 1.5 to 3.5 TTLs), on a worker holding a job when there is one. Counts
 * what it injected. One Redis fault at a time: a failed-over primary comes back, empty, as a replica
 * before the next.
 */
final class FaultInjector {
    private static final long FIRST_FAULT_AFTER_MS = 500;
    private static final long FAILED_OVER_NODE_DOWN_MS = 5_000;
    /** How long after a db-failover's crash the crashed primary comes back as the replica. */
    private static final long REPLICA_REBUILT_AFTER_MS = 2_000;
    private static final long ETCD_MEMBER_DOWN_MS = 2_000;
    /** How long a key-expiry loses the gateway's answers: a few requests per job, before the workers stop for the failures. */
    private static final long ANSWERS_LOST_MS = 1_000;
    /** How long a node killed by a failover may stay down waiting for the Sentinel to promote the other. */
    private static final long PROMOTION_LIMIT_MS = 30_000;

    private final ChaosSettings settings;
    private final Random random;
    private final ReplicatedRedis redis;
    private final EmbeddedEtcd etcd;
    /** The etcd member the last leader kill stopped, and when it comes back. */
    private int killedEtcdMember = -1;
    private long restartEtcdAt;
    private final ChaosDatabase database;
    /** A db-failover under way: when its primary crashes, and when the crashed primary comes back as the replica; 0 when none. */
    private long crashDatabaseAt;
    private long rebuildDatabaseAt;
    /** Failovers completed (primary crashed, replica promoted) and replicas rebuilt; a rebuild that failed ends the fault. */
    private int databaseFailovers;
    private int replicasRebuilt;
    private String databaseBroken;
    private final ChaosGateway gateway;
    private final ChaosBroker broker;
    private final MovableClockRedis clockRedis;
    private final JobQueue queue;
    private final List<ClockJump> clockJumps = new ArrayList<>();
    private final Consumer<String> say;
    private final long startedAt = System.currentTimeMillis();
    private final Map<Fault, Integer> injected = new EnumMap<>(Fault.class);
    /** The ports of each link a partition fault cuts. */
    private final Map<Fault, Set<Integer>> links;
    /** The partitions made, in order, and the workers cut now with when each heals. */
    private final List<Partition> partitions = new ArrayList<>();
    private final Map<ChaosWorkers.Slot, Cut> cuts = new HashMap<>();

    /** A partition in force on a worker, and when it heals (ms since the epoch). */
    private record Cut(Partition partition, long healAt) {
    }
    private long nextFaultAt;
    private int stoppedPort;
    /** The replica that must be primary before {@link #stoppedPort} comes back. */
    private int promotedPort;
    private long restartStoppedAt;
    /** A lagging-failover under way: the primary that goes on alone until {@link #laggingUntil}, and its frozen replica. */
    private int laggingPrimary;
    private int laggingReplica;
    private long laggingUntil;
    private Fault laggingFault;
    /** The worker the last stalled-claim armed. */
    private ChaosWorkers.Slot stalled;
    /** A key-expiry: when it struck, when the gateway's answers come back, and when its lookups do; 0 before it strikes. */
    private long keyExpiryAt;
    private long answersBackAt;
    private long lookupsBackAt;
    private boolean losingAnswers;
    private boolean lookupsDown;

    /**
     * A clock-jump: the merchant whose second job it published, the worker that held the first and
     * that job's stream sequence, and when the clock moved (ms since the epoch, read just before).
     */
    record ClockJump(String merchant, String holder, long sequence, long at) {
    }

    /**
     * A partition: which link of which worker was cut, which way, when (seconds into the faults)
     * and for how long, and what the worker held then.
     */
    record Partition(Fault fault, String worker, WorkerNetworks.Direction direction, double at, long millis, int jobsHeld) {
        /** Its name in the report, e.g. {@code w3 redis both ways at 4.2 s for 2350 ms, holding 1 job}. */
        String describe() {
            String link = fault == Fault.ISOLATE ? "isolated from everything" : fault.label().substring("partition-".length()) + " " + direction;
            return String.format("%s %s at %.1f s for %d ms, holding %d job%s", worker, link, at, millis, jobsHeld, jobsHeld == 1 ? "" : "s");
        }
    }

    /**
     * @param queue where a clock-jump and a partition from Redis publish a merchant's second job
     * @param links the ports of each link a partition fault cuts, by fault
     * @param say gets one line per fault that struck: when, which, on which worker, how long
     */
    FaultInjector(ChaosSettings settings, ChaosLeaseStore leases, ChaosDatabase database, ChaosGateway gateway, ChaosBroker broker, JobQueue queue,
                  Map<Fault, Set<Integer>> links, Consumer<String> say) {
        this.links = Map.copyOf(links);
        this.settings = settings;
        this.random = new Random(settings.seed());
        this.redis = leases.redis;
        this.etcd = leases.etcd;
        this.clockRedis = leases.clockRedis;
        this.queue = queue;
        this.database = database;
        this.gateway = gateway;
        this.broker = broker;
        this.say = say;
        this.nextFaultAt = System.currentTimeMillis() + FIRST_FAULT_AFTER_MS;
    }

    /** Counts a standing fault (one that strikes all along) as injected once. */
    void standing(Fault fault) {
        injected.merge(fault, 1, Integer::sum);
    }

    /**
     * Brings back a failed-over node when its time is up, and strikes when the schedule says so;
     * called in a loop while faults are on.
     *
     * @param targets the workers a fault may hit, asked for only when one strikes
     */
    void tick(Supplier<List<ChaosWorkers.Slot>> targets) {
        heal(false);
        failOverTheDatabase(false);
        endKeyExpiry(false);
        failOverToTheLaggingReplica(false);
        restartStoppedNode(false);
        restartKilledEtcdMember(false);
        if (System.currentTimeMillis() >= nextFaultAt) {
            strike(targets);
            nextFaultAt = System.currentTimeMillis() + 300 + random.nextInt(900);
        }
    }

    /** The end of the faults: a node still down from a failover comes back now. */
    void stop() {
        heal(true);
        endKeyExpiry(true);
        failOverToTheLaggingReplica(true);
        restartStoppedNode(true);
        restartKilledEtcdMember(true);
        failOverTheDatabase(true);
    }

    /** Whether the database's WAL sender is frozen: a synchronous commit made now waits until the crash ends it. */
    boolean databaseFrozen() {
        return crashDatabaseAt != 0;
    }

    /** What the db-failovers did, for the report: failovers completed and replicas rebuilt, and why the fault ended if it did. */
    String databaseFailovers() {
        return databaseFailovers + " failovers (primary crashed, replica promoted), " + replicasRebuilt + " replicas rebuilt"
                + (databaseBroken == null ? "" : "; then no more: " + databaseBroken);
    }

    /**
     * Whether a fault still needs time to do its work: a key-expiry that has not struck yet, or whose
     * lookups are not back, the gateway not yet past the retention of the keys whose answers it lost.
     * The run's faults last until then, however short {@code --duration}.
     */
    boolean busy() {
        return settings.faults().contains(Fault.KEY_EXPIRY) && (keyExpiryAt == 0 || lookupsDown);
    }

    /** Gives the gateway its answers, then its lookups, back when their time is up, or {@code now}. */
    private void endKeyExpiry(boolean now) {
        if (losingAnswers && (now || System.currentTimeMillis() >= answersBackAt)) {
            gateway.loseAnswers(false);
            losingAnswers = false;
            // From now, not from the plan: a late tick must not bring lookups back while a lost answer's key is kept.
            lookupsBackAt = System.currentTimeMillis() + ChaosGateway.KEY_RETENTION.toMillis() + 2_000;
            say.accept(String.format("%6.1f s  %-15s answers back, %d refunds' lost; lookups still down", elapsed(), Fault.KEY_EXPIRY.label(),
                    gateway.answersLost().size()));
        }
        if (lookupsDown && (now || System.currentTimeMillis() >= lookupsBackAt)) {
            gateway.lookupsDown(false);
            lookupsDown = false;
            say.accept(String.format("%6.1f s  %-15s lookups back: the keys of the lost answers are forgotten", elapsed(),
                    Fault.KEY_EXPIRY.label()));
        }
    }

    private double elapsed() {
        return (System.currentTimeMillis() - startedAt) / 1000.0;
    }

    /** Brings back the etcd member a leader kill stopped, when its time is up or {@code now}. */
    private void restartKilledEtcdMember(boolean now) {
        if (killedEtcdMember >= 0 && (now || System.currentTimeMillis() >= restartEtcdAt)) {
            etcd.restart(killedEtcdMember);
            killedEtcdMember = -1;
        }
    }

    /** Lifts the cuts whose time is up, or all of them {@code now}; a worker gone meanwhile took its namespace's cut with it. */
    private void heal(boolean now) {
        long time = System.currentTimeMillis();
        cuts.entrySet().removeIf(cut -> {
            if (!now && time < cut.getValue().healAt()) {
                return false;
            }
            ChaosWorkers.Slot slot = cut.getKey();
            Partition partition = cut.getValue().partition();
            if (slot.process.isAlive()) {
                try {
                    slot.network.heal();
                    say.accept(String.format("%6.1f s  %-15s %s healed", elapsed(), partition.fault().label(), slot.name()));
                } catch (RuntimeException e) {
                    // Never left cut: killed, it is replaced in a namespace of its own, and JetStream redelivers its jobs.
                    try {
                        slot.process.signal("KILL");
                    } catch (IllegalStateException exited) {
                        // gone meanwhile, its namespace with it
                    }
                    say.accept(String.format("%6.1f s  %-15s %s could not be healed, killed: %s", elapsed(), partition.fault().label(),
                            slot.name(), e.getMessage()));
                }
            }
            return true;
        });
    }

    /**
     * The end of a db-failover's window: the primary crashes (its frozen WAL sender killed with what
     * it had not sent) and the replica is promoted; {@link #REPLICA_REBUILT_AFTER_MS} later the
     * crashed primary comes back, wiped, as the new primary's replica. {@code atTheEnd}: the crash now,
     * and no rebuild (the checker needs only the primary). A step that fails is said and ends the
     * fault, never the run: the workers go on with whatever primary is left.
     */
    private void failOverTheDatabase(boolean atTheEnd) {
        try {
            if (crashDatabaseAt != 0 && (atTheEnd || System.currentTimeMillis() >= crashDatabaseAt)) {
                crashDatabaseAt = 0;
                database.pair.crashPrimary();
                database.pair.promoteReplica();
                databaseFailovers++;
                say.accept(String.format("%6.1f s  %-15s primary crashed, what its frozen WAL sender held lost; the replica promoted",
                        elapsed(), Fault.DB_FAILOVER.label()));
                rebuildDatabaseAt = System.currentTimeMillis() + REPLICA_REBUILT_AFTER_MS;
            }
            if (rebuildDatabaseAt != 0 && !atTheEnd && System.currentTimeMillis() >= rebuildDatabaseAt) {
                rebuildDatabaseAt = 0;
                long start = System.currentTimeMillis();
                database.pair.rebuildReplica();
                replicasRebuilt++;
                say.accept(String.format("%6.1f s  %-15s the crashed primary is back as the replica, streaming (%d ms)", elapsed(),
                        Fault.DB_FAILOVER.label(), System.currentTimeMillis() - start));
            }
        } catch (RuntimeException e) {
            crashDatabaseAt = 0;
            rebuildDatabaseAt = 0;
            databaseBroken = e.getMessage();
            say.accept(String.format("%6.1f s  %-15s failed, no more failovers: %s", elapsed(), Fault.DB_FAILOVER.label(), e.getMessage()));
        }
    }

    /** The partitions made, in order. */
    List<Partition> partitions() {
        return List.copyOf(partitions);
    }

    /** The clock-jumps that struck, in order. */
    List<ClockJump> clockJumps() {
        return List.copyOf(clockJumps);
    }

    /** How many times each fault struck. */
    Map<Fault, Integer> injected() {
        return new EnumMap<>(injected);
    }

    /**
     * The end of a lagging-failover's window: the primary, which issued tokens and leases its frozen
     * replica never received, dies; the replica thaws and the Sentinel promotes it, behind.
     */
    private void failOverToTheLaggingReplica(boolean now) {
        if (laggingPrimary != 0 && (now || System.currentTimeMillis() >= laggingUntil)) {
            redis.stopNode(laggingPrimary);
            redis.thawNode(laggingReplica);
            say.accept(String.format("%6.1f s  %-15s primary on port %d killed; the replica on port %d, behind, is promoted",
                    (System.currentTimeMillis() - startedAt) / 1000.0, laggingFault.label(), laggingPrimary, laggingReplica));
            stopped(laggingPrimary, laggingReplica);
            laggingPrimary = 0;
        }
    }

    private void stopped(int primary, int replica) {
        stoppedPort = primary;
        promotedPort = replica;
        restartStoppedAt = System.currentTimeMillis() + FAILED_OVER_NODE_DOWN_MS;
    }

    /**
     * Brings back the primary a failover took down, empty, once the Sentinel has promoted the other
     * node (or the promotion is past its limit): back sooner, the empty node could be primary again
     * and the replica resync from it, and the failover would be a restart.
     */
    private void restartStoppedNode(boolean now) {
        if (stoppedPort == 0) {
            return;
        }
        long deadline = restartStoppedAt - FAILED_OVER_NODE_DOWN_MS + PROMOTION_LIMIT_MS;
        while (now && !promoted() && System.currentTimeMillis() < deadline) {
            WorkerProcess.sleep(100);
        }
        if (now || (System.currentTimeMillis() >= restartStoppedAt && (promoted() || System.currentTimeMillis() >= deadline))) {
            redis.startNode(stoppedPort);
            stoppedPort = 0;
        }
    }

    private boolean promoted() {
        try {
            return redis.primaries().contains(promotedPort);
        } catch (RuntimeException busy) {
            return false; // a Sentinel or node in the middle of the failover
        }
    }

    private void strike(Supplier<List<ChaosWorkers.Slot>> targets) {
        List<Fault> enabled = new ArrayList<>(settings.faults());
        enabled.removeIf(Fault::standing);
        if (enabled.isEmpty()) {
            return;
        }
        Fault fault = enabled.get(random.nextInt(enabled.size()));
        List<ChaosWorkers.Slot> live = targets.get();
        switch (fault) {
            case PAUSE -> {
                if (live.isEmpty()) {
                    return;
                }
                ChaosWorkers.Slot slot = live.get(random.nextInt(live.size()));
                slot.process.signal("STOP");
                long pause = (long) (settings.ttl().toMillis() * (1.5 + random.nextDouble() * 2));
                slot.pausedUntil = System.currentTimeMillis() + pause;
                struck(fault, slot.name() + " for " + pause + " ms, holding " + slot.held.size() + " jobs");
            }
            case KILL -> {
                if (live.isEmpty()) {
                    return;
                }
                ChaosWorkers.Slot slot = live.get(random.nextInt(live.size()));
                slot.process.signal("KILL");
                struck(fault, slot.name() + ", holding " + slot.held.size() + " jobs");
            }
            case LAGGING_FAILOVER, CLUSTER_FAILOVER -> {
                if (stoppedPort != 0 || laggingPrimary != 0) {
                    return; // one Redis fault at a time
                }
                List<Integer> primaries = redis.primaries();
                int primary = primaries.get(random.nextInt(primaries.size()));
                int replica = redis.replicaOf(primary);
                if (replica < 0 || !redis.laggingReplica(replica, primary)) {
                    return; // the node back from the last failover is not the primary's replica yet
                }
                laggingPrimary = primary;
                laggingReplica = replica;
                laggingFault = fault;
                // A worker frozen past its lease: its job is redelivered and taken again while the replica
                // lags, so the primary issues tokens that the failover then loses.
                String frozen = "";
                if (!live.isEmpty()) {
                    ChaosWorkers.Slot slot = live.get(random.nextInt(live.size()));
                    slot.process.signal("STOP");
                    slot.pausedUntil = System.currentTimeMillis() + settings.ttl().toMillis() * 2;
                    frozen = "; " + slot.name() + " frozen for " + settings.ttl().toMillis() * 2 + " ms";
                }
                laggingUntil = System.currentTimeMillis() + Math.max(3_000, settings.ttl().toMillis() * 3);
                struck(fault, "replica on port " + laggingReplica + " frozen and cut off; primary on port " + laggingPrimary
                        + " goes on alone for " + (laggingUntil - System.currentTimeMillis()) + " ms" + frozen);
            }
            case REDIS_RESTART, FLUSHALL, FAILOVER -> {
                if (stoppedPort != 0 || laggingPrimary != 0) {
                    return; // a failover is under way: one Redis fault at a time
                }
                int primary = redis.primaries().get(0);
                int replica = redis.replicaOf(primary);
                if (fault == Fault.FAILOVER && replica < 0) {
                    return; // no replica in sync yet to promote
                }
                strikeRedis(fault, primary, replica);
                struck(fault, "primary on port " + primary);
            }
            case ETCD_LEADER_KILL -> {
                if (killedEtcdMember >= 0) {
                    return; // one member down at a time: two would cost the cluster its quorum
                }
                killedEtcdMember = etcd.killLeader();
                restartEtcdAt = System.currentTimeMillis() + ETCD_MEMBER_DOWN_MS;
                struck(fault, "member " + killedEtcdMember + " (the leader) by SIGKILL; back after " + ETCD_MEMBER_DOWN_MS + " ms");
            }
            case DB_KILL -> {
                if (databaseFrozen()) {
                    // Terminating a commit that waits for the standby leaves it committed on the primary, visible, and then
                    // lost with the crash: a synchronous pair's promise holds only for waits the crash itself ends.
                    return;
                }
                Optional<String> refused = terminateBackends();
                if (refused.isPresent()) {
                    // Another fault has the database down or failing over (the driver may pass over, for up to 10 s, a
                    // node it last saw as a replica): nothing to kill now, and not a reason to end the run.
                    say.accept(String.format("%6.1f s  %-15s not now: no connection to the database (%s)", elapsed(), fault.label(),
                            refused.get()));
                    return;
                }
                struck(fault, "every client connection");
            }
            case GATEWAY_OUTAGE -> {
                if (!gateway.listening()) {
                    return;
                }
                Duration outage = Duration.ofMillis(2_000 + random.nextInt(3_000)); // longer than a worker's retries
                gateway.outage(outage);
                struck(fault, outage.toMillis() + " ms");
            }
            case GATEWAY_RESTART -> {
                if (!gateway.listening()) {
                    return;
                }
                gateway.restart();
                struck(fault, "from its ledger");
            }
            case STALLED_CLAIM -> {
                if (live.isEmpty() || (stalled != null && stalled.stalling())) {
                    return; // one at a time: a frozen worker freezes all its jobs, and the others must be there to meet its locks
                }
                ChaosWorkers.Slot slot = live.get(random.nextInt(live.size()));
                // Past the holder's lease and AckWait, so that the job is redelivered and the next
                // holder's claim meets the locks: 1.5 to 3.5 TTLs, 4.5 to 10.5 times its lock wait.
                long stall = (long) (settings.ttl().toMillis() * (1.5 + random.nextDouble() * 2));
                if (!slot.armStall(stall)) {
                    return;
                }
                stalled = slot;
                struck(fault, slot.name() + ": its next claim stops inside its transaction, its rows locked, frozen for " + stall + " ms");
            }
            case KEY_EXPIRY -> {
                if (keyExpiryAt != 0) {
                    return; // once: it outlasts the run's faults
                }
                // Requests carried out and their answers lost, and no lookup to settle them until the gateway has forgotten
                // their keys: a worker that then sends again under the same key pays twice.
                keyExpiryAt = System.currentTimeMillis();
                answersBackAt = keyExpiryAt + ANSWERS_LOST_MS;
                lookupsBackAt = answersBackAt + ChaosGateway.KEY_RETENTION.toMillis() + 2_000;
                gateway.loseAnswers(true);
                gateway.lookupsDown(true);
                losingAnswers = true;
                lookupsDown = true;
                struck(fault, "answers lost for " + ANSWERS_LOST_MS + " ms and lookups down meanwhile, until "
                        + (ChaosGateway.KEY_RETENTION.toSeconds() + 2) + " s after the answers are back; keys kept "
                        + ChaosGateway.KEY_RETENTION.toSeconds() + " s");
            }
            case CLOCK_JUMP -> {
                List<ChaosWorkers.Slot> holding = live.stream().filter(slot -> !slot.held.isEmpty()).toList();
                if (holding.isEmpty()) {
                    return;
                }
                ChaosWorkers.Slot slot = holding.get(random.nextInt(holding.size()));
                List<Map.Entry<Long, String>> jobs = List.copyOf(slot.held.entrySet());
                if (jobs.isEmpty()) {
                    return; // answered meanwhile
                }
                Map.Entry<Long, String> job = jobs.get(random.nextInt(jobs.size()));
                String merchant = job.getValue();
                // Past every lease's end by Redis's clock, while the JVMs' clocks and the holders' renewals go on as before:
                // the next worker to ask is granted the lease at once, while its holder still runs.
                Duration jump = Duration.ofSeconds(settings.ttl().toSeconds() + 1);
                long at = System.currentTimeMillis();
                clockRedis.moveClockForward(jump);
                try {
                    queue.publishAgain(merchant, "clock-jump-" + (clockJumps.size() + 1));
                } catch (RuntimeException brokerAway) { // e.g. just restarted: the jump struck, with no second job to count
                    struck(fault, "Redis's clock +" + jump.toSeconds() + " s, every lease ended; no second job for " + merchant + ": "
                            + brokerAway.getMessage());
                    return;
                }
                clockJumps.add(new ClockJump(merchant, slot.name(), job.getKey(), at));
                struck(fault, "Redis's clock +" + jump.toSeconds() + " s, every lease ended; a second job for " + merchant + ", which "
                        + slot.name() + " holds");
            }
            case PARTITION_REDIS, PARTITION_DB, PARTITION_GATEWAY, PARTITION_NATS, ISOLATE -> {
                List<ChaosWorkers.Slot> uncut = live.stream().filter(slot -> slot.network != null && !cuts.containsKey(slot)).toList();
                if (uncut.isEmpty()) {
                    return;
                }
                ChaosWorkers.Slot slot = uncut.get(random.nextInt(uncut.size()));
                WorkerNetworks.Direction direction = fault == Fault.ISOLATE ? WorkerNetworks.Direction.BOTH
                        : WorkerNetworks.Direction.values()[random.nextInt(WorkerNetworks.Direction.values().length)];
                // Past the holder's lease and AckWait, as a pause: its lease ends while it runs, cut off.
                long millis = (long) (settings.ttl().toMillis() * (1.5 + random.nextDouble() * 2));
                List<String> held = List.copyOf(slot.held.values());
                try {
                    if (fault == Fault.ISOLATE) {
                        slot.network.isolate();
                    } else {
                        slot.network.cut(links.get(fault), direction);
                    }
                } catch (RuntimeException e) {
                    if (slot.process.isAlive()) { // else it died since it was picked, and its namespace went with it
                        say.accept(String.format("%6.1f s  %-15s not struck on %s: %s", elapsed(), fault.label(), slot.name(), e.getMessage()));
                    }
                    return;
                }
                Partition partition = new Partition(fault, slot.name(), direction, elapsed(), millis, held.size());
                partitions.add(partition);
                cuts.put(slot, new Cut(partition, System.currentTimeMillis() + millis));
                String second = "";
                if (fault == Fault.PARTITION_REDIS && !held.isEmpty()) {
                    // Its lease runs out while it still reaches the database and the gateway; JetStream keeps its job with it,
                    // so the takeover a partition invites needs a second job for the merchant, as a second batch would bring.
                    String merchant = held.get(random.nextInt(held.size()));
                    try {
                        queue.publishAgain(merchant, "partition-" + partitions.size());
                        second = "; a second job for " + merchant;
                    } catch (RuntimeException brokerAway) {
                        second = "; no second job for " + merchant + ": " + brokerAway.getMessage();
                    }
                }
                struck(fault, partition.describe() + " (ports " + (fault == Fault.ISOLATE ? "all" : new java.util.TreeSet<>(links.get(fault)))
                        + ")" + second);
            }
            case DB_FAILOVER -> {
                if (crashDatabaseAt != 0 || rebuildDatabaseAt != 0 || databaseBroken != null) {
                    return; // one failover at a time: the pair needs its replica back first
                }
                // The replica stops receiving; a worker holding a job is frozen past its lease, so its job is taken over
                // while the replica lags, and thawed after the crash, when only what the replica had is left.
                database.pair.freezeReplication();
                long window = Math.max(3_000, settings.ttl().toMillis() * 3);
                String frozen = "";
                if (!live.isEmpty()) {
                    ChaosWorkers.Slot slot = live.get(random.nextInt(live.size()));
                    slot.process.signal("STOP");
                    long pause = window + settings.ttl().toMillis() / 2;
                    slot.pausedUntil = System.currentTimeMillis() + pause;
                    frozen = "; " + slot.name() + " frozen for " + pause + " ms, holding " + slot.held.size() + " jobs";
                }
                crashDatabaseAt = System.currentTimeMillis() + window;
                struck(fault, "the WAL sender frozen, the replica " + (database.pair.synchronous() ? "synchronous: commits wait for it"
                        : "asynchronous: commits go on without it") + "; the primary crashes in " + window + " ms" + frozen);
            }
            case NATS_RESTART -> {
                long start = System.currentTimeMillis();
                broker.restart(); // the workers reconnect on their own; JetStream redelivers what went unacked
                struck(fault, "back after " + (System.currentTimeMillis() - start) + " ms, on its file storage");
            }
            default -> throw new IllegalStateException("unhandled fault " + fault);
        }
    }

    private void struck(Fault fault, String what) {
        injected.merge(fault, 1, Integer::sum);
        say.accept(String.format("%6.1f s  %-15s %s", (System.currentTimeMillis() - startedAt) / 1000.0, fault.label(), what));
    }

    private void strikeRedis(Fault fault, int primary, int replica) {
        if (fault == Fault.FLUSHALL) {
            try (RedisClient client = RedisClient.create("redis://127.0.0.1:" + primary); var connection = client.connect()) {
                connection.sync().flushall();
            }
        } else if (fault == Fault.REDIS_RESTART) {
            redis.restartPrimary(primary); // back before the Sentinel may fail over: empty, and the replica resyncs from it
        } else {
            redis.stopNode(primary); // the Sentinel promotes the replica after about a second
            stopped(primary, replica);
        }
    }

    /** Terminates every client's connection to the run's database; why no connection could be made, if none could. */
    private Optional<String> terminateBackends() {
        try (Connection c = DriverManager.getConnection(database.jdbcUrl()); Statement s = c.createStatement()) {
            s.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
                    + " AND datname = current_database() AND backend_type = 'client backend'");
            return Optional.empty();
        } catch (SQLException e) {
            if (e.getSQLState() != null && e.getSQLState().startsWith("08")) { // connection exceptions: the database is down
                return Optional.of(String.valueOf(e.getMessage()));
            }
            throw new IllegalStateException("could not terminate database connections: " + e.getMessage(), e);
        }
    }
}
