package dev.fenced.lab;

import dev.fenced.cli.EventLine;
import dev.fenced.cli.LeaseBackend;
import dev.fenced.fleet.JobEvent;
import dev.fenced.settlement.SettlementEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The chaos run's worker processes: fleet workers ({@code lab-worker}) on the run's stream. A dead
 * one is replaced, a paused one is resumed when its pause is over, and at the end each is drained
 * with SIGTERM. Which jobs a worker holds is read from its job lines (received, then answered), so
 * that a fault can strike a worker holding one.
 */
final class ChaosWorkers implements AutoCloseable {
    /** One worker process and what the run knows of it. */
    static final class Slot {
        final WorkerProcess process;
        /** The network namespace it runs in, whose links a partition cuts; null in a run without partitions. */
        final WorkerNetworks.Namespace network;
        /** The jobs it received and has not answered yet: stream sequence to merchant. */
        final Map<Long, String> held = new ConcurrentHashMap<>();
        /** When a SIGSTOPped worker is due to be resumed; 0 when it runs. */
        volatile long pausedUntil;
        /** Armed to stall its next claim for this many ms ({@link Fault#STALLED_CLAIM}); 0 when not armed. */
        volatile long stallFor;
        /** Waiting at its in-claim breakpoint for a 'go' on stdin. */
        volatile boolean inClaim;

        private Slot(WorkerProcess process, WorkerNetworks.Namespace network) {
            this.process = process;
            this.network = network;
        }

        boolean paused() {
            return pausedUntil > 0;
        }

        String name() {
            return process.name();
        }

        /** Makes its next claim stop inside its transaction, to be frozen there for {@code millis}; false when it is armed already or gone. */
        boolean armStall(long millis) {
            if (stallFor > 0) {
                return false;
            }
            stallFor = millis;
            return cue("arm");
        }

        /** Armed to stall its next claim, or frozen inside one, and alive. */
        boolean stalling() {
            return (stallFor > 0 || inClaim) && process.isAlive();
        }

        /** A line on the worker's stdin; false when the worker is gone. */
        private boolean cue(String line) {
            try {
                process.writeLine(line);
                return true;
            } catch (java.io.UncheckedIOException gone) {
                return false;
            }
        }

        /** Keeps {@link #held} up to date from the worker's job lines. */
        void track(EventLine line) {
            if (line instanceof EventLine.Job job) {
                if (job.type() == JobEvent.Type.RECEIVED) {
                    held.put(job.sequence(), job.merchant());
                } else {
                    held.remove(job.sequence());
                }
            }
        }
    }

    /** The exit code of a process ended by SIGKILL. */
    private static final int KILLED = 128 + 9;

    private final ChaosSettings settings;
    private final Map<String, String> env;
    private final String stream;
    private final Consumer<EventLine> listener;
    private final Consumer<String> say;
    private final WorkerNetworks networks;
    private final Map<String, Slot> slots = new LinkedHashMap<>();
    private int started;
    /** Set when the faults stop: a claim that stops inside its transaction afterwards goes on at once. */
    private boolean faultsOver;

    /**
     * @param listener gets every line of every worker, on the worker's reader thread
     * @param say gets a line for every worker that exited without being killed, with the end of its stderr
     * @param networks where each worker gets a network namespace of its own, or null to run them in this one
     */
    ChaosWorkers(ChaosSettings settings, Map<String, String> env, String stream, Consumer<EventLine> listener, Consumer<String> say,
                 WorkerNetworks networks) {
        this.networks = networks;
        this.settings = settings;
        this.env = env;
        this.stream = stream;
        this.listener = listener;
        this.say = say;
    }

    /**
     * The command line of a chaos worker: the fleet's worker with the lab's knobs, on {@code stream},
     * with the run's TTL, a visibility timeout of one TTL, and fencing off for the negative control;
     * in a key-expiry run, the gateway's key retention (unless the control trusts keys for a day).
     */
    static List<String> args(ChaosSettings settings, String name, String stream, int jobs) {
        List<String> args = new ArrayList<>(List.of("lab-worker", "--name", name, "--stream", stream, "--events",
                "--jobs", Integer.toString(jobs), "--concurrency", Integer.toString(settings.concurrency()),
                "--ttl", settings.ttl().toMillis() + "ms", "--ack-wait", settings.ackWait().toMillis() + "ms",
                "--max-deliver", Integer.toString(JobQueue.MAX_DELIVER)));
        if (!settings.fencing()) {
            args.add("--no-fence");
            args.add("--no-journal-guard");
        }
        if (settings.faults().contains(Fault.STALLED_CLAIM)) {
            args.add("--stall-claims-on-cue");
        }
        if (settings.faults().contains(Fault.KEY_EXPIRY)) {
            // One attempt of at most a second: the shortest send, so that the margin the retention must leave is short too.
            args.addAll(List.of("--gateway-attempts", "1", "--gateway-timeout", "1s"));
            if (!settings.trustKeys()) {
                args.addAll(List.of("--gateway-key-retention", ChaosGateway.KEY_RETENTION.toSeconds() + "s",
                        "--key-retention-margin", ChaosGateway.KEY_RETENTION_MARGIN.toSeconds() + "s"));
            }
        }
        args.add("--leases");
        args.add(settings.leases().setting());
        if (settings.leases() == LeaseBackend.REDIS) {
            args.add("--tokens");
            args.add(settings.tokens().setting());
        }
        return args;
    }

    /** Starts one more worker process. */
    synchronized void start() {
        String name = "w" + (++started);
        Slot[] holder = new Slot[1]; // set microseconds after the start, long before the JVM prints its first job line
        WorkerNetworks.Namespace network = networks == null ? null : networks.create(name);
        WorkerProcess process = WorkerProcess.start(name, args(settings, name, stream, settings.jobs()), env, line -> {
            if (holder[0] != null) {
                holder[0].track(line);
                if (line instanceof EventLine.Event event && event.type() == SettlementEvent.Type.BREAKPOINT) {
                    stoppedInClaim(holder[0], event);
                }
            }
            listener.accept(line);
        }, network == null ? List.of() : network.launcher());
        holder[0] = new Slot(process, network);
        slots.put(name, holder[0]);
    }

    /**
     * A worker armed by {@link Fault#STALLED_CLAIM} stopped inside its claim transaction: freeze it
     * there with SIGSTOP, its rows locked, until its stall is over ({@link #tend}).
     */
    private synchronized void stoppedInClaim(Slot slot, EventLine.Event event) {
        long stall = slot.stallFor;
        slot.stallFor = 0;
        if (faultsOver || stall == 0 || !slot.process.isAlive()) {
            slot.cue("go");
            return;
        }
        slot.inClaim = true;
        slot.process.signal("STOP");
        slot.pausedUntil = System.currentTimeMillis() + stall;
        say.accept(slot.name() + " frozen inside its claim of " + event.refund() + " (" + event.merchant() + ") for " + stall + " ms");
    }

    /** Worker processes started so far, replacements included. */
    synchronized int started() {
        return started;
    }

    /** Resumes the workers whose pause is over and replaces the dead ones. */
    synchronized void tend(long now) {
        for (Slot slot : new ArrayList<>(slots.values())) {
            if (slot.paused() && now >= slot.pausedUntil) {
                resume(slot);
            }
            if (!slot.process.isAlive()) {
                int exit = slot.process.awaitExit(Duration.ZERO);
                if (exit != KILLED) {
                    say.accept(slot.name() + " exited with " + exit + ", replaced: " + slot.process.stderrTail());
                }
                slots.remove(slot.name());
                if (slot.network != null) {
                    slot.network.close();
                }
                start();
            }
        }
    }

    /** Live workers that run (are not paused): those holding a job if any does, since a fault on one of them is the one that can do harm. */
    synchronized List<Slot> targets() {
        List<Slot> running = slots.values().stream().filter(s -> s.process.isAlive() && !s.paused()).toList();
        List<Slot> busy = running.stream().filter(s -> !s.held.isEmpty()).toList();
        return busy.isEmpty() ? running : busy;
    }

    /** The end of the faults: every worker resumed, and no claim stops inside its transaction any more. */
    synchronized void resumeAll() {
        faultsOver = true;
        slots.values().forEach(slot -> {
            if (slot.stallFor > 0) {
                slot.stallFor = 0;
                slot.cue("disarm");
            }
            resume(slot);
        });
    }

    private static void resume(Slot slot) {
        if (slot.paused()) {
            slot.pausedUntil = 0;
            if (slot.process.isAlive()) {
                slot.process.signal("CONT");
            }
        }
        if (slot.inClaim) {
            slot.inClaim = false;
            slot.cue("go");
        }
    }

    /** Drains every worker with SIGTERM (what is in flight confirmed, jobs handed back) and waits; kills those that do not exit. */
    synchronized void stop() {
        slots.values().forEach(slot -> terminate(slot.process));
        slots.values().forEach(slot -> awaitExit(slot.process));
    }

    /**
     * Kills every worker still alive, a stopped one too: after {@link #stop()} there is none; after a run that ended by an
     * exception, none outlives it, paused or cut off in a network namespace about to go.
     */
    @Override
    public synchronized void close() {
        slots.values().forEach(slot -> slot.process.close());
    }

    static void terminate(WorkerProcess process) {
        if (process.isAlive()) {
            try {
                process.signal("TERM");
            } catch (IllegalStateException gone) {
                // exited meanwhile
            }
        }
    }

    static void awaitExit(WorkerProcess process) {
        try {
            process.awaitExit(Duration.ofSeconds(45));
        } catch (IllegalStateException stuck) {
            process.close();
        }
    }
}
