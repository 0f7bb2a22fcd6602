package dev.fenced.lab;

import dev.fenced.cli.EventLine;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * The chaos run's worker processes ({@code chaos-worker}): a dead one is replaced, a paused one is
 * resumed when its pause is over, and at the end each is told to finish (its stdin closed) and
 * waited for.
 */
final class ChaosWorkers {
    /** One worker process and what the run knows of it. */
    static final class Slot {
        final WorkerProcess process;
        /** Jobs the worker said it can take ({@code ready} lines) and has not been handed yet. */
        final AtomicInteger capacity = new AtomicInteger();
        /** When a SIGSTOPped worker is due to be resumed; 0 when it runs. */
        volatile long pausedUntil;

        private Slot(WorkerProcess process) {
            this.process = process;
        }

        boolean paused() {
            return pausedUntil > 0;
        }

        String name() {
            return process.name();
        }
    }

    private final ChaosSettings settings;
    private final Map<String, String> env;
    private final BiConsumer<Slot, EventLine> listener;
    private final Map<String, Slot> slots = new LinkedHashMap<>();
    private int started;

    /** @param listener gets every line of every worker, with its slot, on the worker's reader thread */
    ChaosWorkers(ChaosSettings settings, Map<String, String> env, BiConsumer<Slot, EventLine> listener) {
        this.settings = settings;
        this.env = env;
        this.listener = listener;
    }

    /** Starts one more worker process. */
    synchronized void start() {
        String name = "w" + (++started);
        List<String> args = new ArrayList<>(List.of("chaos-worker", "--name", name, "--ttl", settings.ttl().toMillis() + "ms", "--jobs", "3",
                "--concurrency", Integer.toString(settings.concurrency())));
        if (!settings.fencing()) {
            args.add("--no-fence");
        }
        if (settings.dbTokens()) {
            args.add("--db-tokens");
        }
        Slot[] holder = new Slot[1]; // its first lines may come before the slot exists: they find it here
        WorkerProcess process = WorkerProcess.start(name, args, env, line -> listener.accept(holder[0], line));
        holder[0] = new Slot(process);
        slots.put(name, holder[0]);
    }

    /** Worker processes started so far, replacements included. */
    synchronized int started() {
        return started;
    }

    /** Resumes the workers whose pause is over, replaces the dead ones, and returns the live ones. */
    synchronized List<Slot> tend(long now) {
        List<Slot> live = new ArrayList<>();
        for (Slot slot : new ArrayList<>(slots.values())) {
            if (slot.paused() && now >= slot.pausedUntil) {
                resume(slot);
            }
            if (slot.process.isAlive()) {
                live.add(slot);
            } else {
                slots.remove(slot.name());
                start();
            }
        }
        return live;
    }

    /** Live workers that run (are not paused): what a fault can strike. */
    synchronized List<Slot> running() {
        return slots.values().stream().filter(s -> s.process.isAlive() && !s.paused()).toList();
    }

    synchronized void resumeAll() {
        slots.values().forEach(ChaosWorkers::resume);
    }

    private static void resume(Slot slot) {
        if (slot.paused()) {
            slot.pausedUntil = 0;
            if (slot.process.isAlive()) {
                slot.process.signal("CONT");
            }
        }
    }

    /** Closes every worker's stdin, so that it finishes its jobs and exits; kills those that do not. */
    synchronized void stop() {
        for (Slot slot : slots.values()) {
            slot.process.closeStdin();
        }
        for (Slot slot : slots.values()) {
            try {
                slot.process.awaitExit(Duration.ofSeconds(20));
            } catch (IllegalStateException stuck) {
                slot.process.close();
            }
        }
    }
}
