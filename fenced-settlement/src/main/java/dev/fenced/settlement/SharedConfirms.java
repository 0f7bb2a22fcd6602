package dev.fenced.settlement;

import dev.fenced.FencedException;
import java.sql.SQLException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * The confirm batches of every run of this process that writes to one data source, with refunds in
 * parallel: one group commit and one committer thread per data source, not per run. A worker
 * settling four merchants at once wrote four streams of small batches, a commit each; one stream
 * writes fewer, larger batches: in the fleet bench PostgreSQL's CPU per refund 0.75x, a worker's
 * 0.85x, refunds per second 1.15x (BENCHMARKS.md, "one confirm committer per process").
 *
 * <p>Each row of a batch is confirmed under its own run's token, so a stale run's row is refused
 * in a batch as it is alone. The rows of several runs go in one transaction: a batch that fails
 * leaves every row in it {@code sending}, each caller hears the failure, and the next holder of
 * each merchant looks its rows up, as after any failed confirm. One thread writes, so that only it
 * keeps the JDK's per-thread socket-buffer cache (the heap reason in {@link SettlementRun}); it
 * ends after a minute idle. Thread-safe.
 */
final class SharedConfirms {
    /**
     * A confirm of one run: a stale and a new run of one merchant in one process may confirm the
     * same refund at once, so a refund id alone would not tell their confirms apart.
     */
    record Entry(RunWrites run, String refundId) {
        @Override
        public String toString() {
            return refundId + " under token " + run.token();
        }
    }

    /** Weak keys: a data source no run uses any more, and its batcher, go. A waiting entry holds its data source. */
    private static final Map<DataSource, SharedConfirms> BY_DATA_SOURCE = Collections.synchronizedMap(new WeakHashMap<>());
    private static final AtomicInteger COMMITTERS = new AtomicInteger();

    private final ConfirmBatcher<Entry> batcher = new ConfirmBatcher<>(this::writeOnCommitter);
    private final ThreadPoolExecutor committer = new ThreadPoolExecutor(0, 1, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(),
            runnable -> {
                Thread thread = new Thread(runnable, "fenced-confirm-" + COMMITTERS.incrementAndGet());
                thread.setDaemon(true);
                return thread;
            });

    private SharedConfirms() {
    }

    /** The confirms of every run writing to {@code dataSource}. */
    static SharedConfirms of(DataSource dataSource) {
        return BY_DATA_SOURCE.computeIfAbsent(dataSource, d -> new SharedConfirms());
    }

    /** Blocks until the run's confirm of the refund is written with the others waiting; says why it was refused, if it was. */
    Optional<FencedException> confirm(RunWrites run, String refundId, String gatewayReference) throws SQLException {
        return batcher.confirm(new Entry(run, refundId), gatewayReference);
    }

    /** The batch written on the committer thread; the caller waits for it, also when interrupted: a confirm is not abandoned half-way. */
    private Map<Entry, FencedException> writeOnCommitter(Map<Entry, String> batch) throws SQLException {
        Future<Map<Entry, FencedException>> written = committer.submit(() -> write(batch));
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return written.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof SQLException sql) {
                        throw sql;
                    }
                    if (e.getCause() instanceof RuntimeException runtime) {
                        throw runtime;
                    }
                    if (e.getCause() instanceof Error error) {
                        throw error;
                    }
                    throw new IllegalStateException("the confirm batch failed: " + e.getCause(), e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Writes the batch: one run's rows as that run writes them alone, several runs' rows in one transaction. */
    static Map<Entry, FencedException> write(Map<Entry, String> batch) throws SQLException {
        Map<RunWrites, Map<String, String>> byRun = new LinkedHashMap<>();
        batch.forEach((entry, reference) -> byRun.computeIfAbsent(entry.run(), run -> new LinkedHashMap<>()).put(entry.refundId(), reference));
        Map<RunWrites, Map<String, FencedException>> refusedByRun;
        if (byRun.size() == 1) {
            Map.Entry<RunWrites, Map<String, String>> only = byRun.entrySet().iterator().next();
            refusedByRun = Map.of(only.getKey(), only.getKey().writeConfirms(only.getValue()));
        } else {
            refusedByRun = RunWrites.writeConfirmsTogether(byRun);
        }
        Map<Entry, FencedException> refusals = new LinkedHashMap<>();
        refusedByRun.forEach((run, refused) -> refused.forEach((refundId, refusal) -> refusals.put(new Entry(run, refundId), refusal)));
        return refusals;
    }
}
