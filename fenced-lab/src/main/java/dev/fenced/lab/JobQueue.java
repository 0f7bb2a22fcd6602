package dev.fenced.lab;

import dev.fenced.cli.EventLine;
import dev.fenced.settlement.SettlementOutcome;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import javax.sql.DataSource;

/**
 * The chaos run's queue of jobs (one per merchant), as a queue with a visibility timeout would run
 * it: a job goes to a worker that said it has room; it comes back when its holder reports it
 * unfinished, or when the holder has been silent for the visibility timeout (a paused or dead
 * holder), so that another worker takes it over while the first may still wake up. Any worker
 * line about the job counts as a sign of life. Thread-safe: workers' lines arrive on their reader threads.
 */
final class JobQueue {
    /** A job the gateway turned away waits this long before it is handed out again, as a queue's delayed redelivery would. */
    private static final long GATEWAY_RETRY_DELAY_MS = 1_000;

    private final long visibilityMillis;
    private final Deque<String> queue = new ArrayDeque<>();
    private final Map<String, String> holderOfJob = new HashMap<>();
    private final Map<String, Long> handedAt = new HashMap<>();
    private final Map<String, Long> notBefore = new HashMap<>();
    private final Set<String> done = new HashSet<>();

    JobQueue(Collection<String> merchants, Duration visibilityTimeout) {
        this.queue.addAll(merchants);
        this.visibilityMillis = visibilityTimeout.toMillis();
    }

    /** What a worker's line tells the queue: room for a job, a sign of life, or how a job ended. */
    synchronized void onLine(ChaosWorkers.Slot slot, EventLine line) {
        if (line instanceof EventLine.Ready) {
            if (slot != null) {
                slot.capacity.incrementAndGet();
            }
            return;
        }
        String merchant = Events.merchant(line);
        boolean fromHolder = merchant != null && Objects.equals(holderOfJob.get(merchant), line.worker());
        if (fromHolder) {
            handedAt.put(merchant, System.currentTimeMillis()); // progress extends the job's visibility timeout
        }
        if (line instanceof EventLine.Result result) {
            if (result.result() == SettlementOutcome.Result.COMPLETED) {
                done.add(merchant);
                queue.remove(merchant);
            }
            if (fromHolder) {
                holderOfJob.remove(merchant);
                handedAt.remove(merchant);
                if (result.result() == SettlementOutcome.Result.GATEWAY_UNAVAILABLE) {
                    notBefore.put(merchant, System.currentTimeMillis() + GATEWAY_RETRY_DELAY_MS);
                }
                if (!done.contains(merchant) && !queue.contains(merchant)) {
                    queue.addLast(merchant);
                }
            }
        }
    }

    /** Requeues the jobs whose holder went silent, then hands queued jobs to the workers with room. */
    synchronized void dispatch(List<ChaosWorkers.Slot> workers) {
        long now = System.currentTimeMillis();
        for (Map.Entry<String, Long> job : new ArrayList<>(handedAt.entrySet())) {
            if (now - job.getValue() > visibilityMillis && !done.contains(job.getKey()) && !queue.contains(job.getKey())) {
                queue.addLast(job.getKey()); // the holder went silent: another worker gets the job, as a queue would do
                handedAt.put(job.getKey(), Long.MAX_VALUE / 2);
            }
        }
        for (ChaosWorkers.Slot slot : workers) {
            while (slot.capacity.get() > 0 && !slot.paused() && !queue.isEmpty()) {
                String merchant = nextReady(now);
                if (merchant == null) {
                    break;
                }
                slot.capacity.decrementAndGet();
                holderOfJob.put(merchant, slot.name());
                handedAt.put(merchant, now);
                try {
                    slot.process.writeLine(merchant);
                } catch (UncheckedIOException gone) {
                    queue.addFirst(merchant);
                    break;
                }
            }
        }
    }

    /** The first queued job whose delay is over, or null. */
    private String nextReady(long now) {
        for (String merchant : queue) {
            if (notBefore.getOrDefault(merchant, 0L) <= now) {
                queue.remove(merchant);
                notBefore.remove(merchant);
                return merchant;
            }
        }
        return null;
    }

    /** True while the worker holds a job (as far as the queue knows). */
    synchronized boolean holdsAJob(String worker) {
        return holderOfJob.containsValue(worker);
    }

    /** When nothing is queued or held, queues these merchants' jobs again, even if their holders reported them done. */
    synchronized void requeueIfIdle(Collection<String> merchants) {
        if (queue.isEmpty() && holderOfJob.isEmpty()) {
            for (String merchant : merchants) {
                done.remove(merchant);
                queue.addLast(merchant);
            }
        }
    }

    /** Merchants with refunds still pending or sending; failed ones are the checker's business, not the drain's. */
    static Map<String, Long> unsettledByMerchant(DataSource db) throws SQLException {
        Map<String, Long> out = new LinkedHashMap<>();
        try (Connection c = db.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT merchant, COUNT(*) FROM refund WHERE state IN ('pending', 'sending') GROUP BY merchant")) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getLong(2));
            }
        }
        return out;
    }
}
