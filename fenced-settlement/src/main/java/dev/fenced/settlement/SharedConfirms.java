package dev.fenced.settlement;

import dev.fenced.FencedException;
import dev.fenced.internal.Redaction;
import java.sql.SQLException;
import java.time.Duration;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The confirm batches of every run of this process that writes to one data source through one
 * {@link RefundWrites}, with refunds in parallel: one group commit and one committer thread, not
 * one per run, when the writes bound their batches ({@link RefundWrites#boundsConfirmEach}). A
 * worker settling four merchants at once wrote four streams of small batches, a commit each; one
 * stream writes fewer, larger batches (BENCHMARKS.md, "one confirm committer per process,
 * isolated").
 *
 * <p>Each row of a batch is confirmed under its own run's token, so a stale run's row is refused
 * in a batch as it is alone. The rows of several runs go in one auto-committed batch sorted by
 * refund id, as one run's batch is; its writer first gathers confirms for at most
 * {@link #GATHER} (less once every run's confirm places wait), and a batch waits at most
 * {@link #TOGETHER_WAIT} for a row lock (on MariaDB, whose driver bounds each statement of a
 * batch, that long per locked row), and its read of why rows were refused as long again. When a batch fails for any reason (that wait, a row
 * the database refuses, a lost connection), no caller hears that failure: each writes its own
 * confirm again by itself, on its own thread, with no bound but the data source's. So a run whose
 * row another process has locked waits alone, and a confirm the database refuses fails alone. What
 * the others can still wait for is the data source's: a connection from its pool, a socket that
 * hangs (the worker's {@code --db-socket-timeout}). One thread writes the batches, so
 * that only it keeps the JDK's per-thread socket-buffer cache (the heap reason in
 * {@link SettlementRun}); it ends after a minute idle. Thread-safe.
 */
final class SharedConfirms {
    /** How long a batch waits for a row lock before each of its confirms is written by itself. */
    static final Duration TOGETHER_WAIT = Duration.ofSeconds(1);

    /**
     * How long a batch's writer waits for more confirms before it writes, unless every run's confirm
     * places fill first. Each batch is a commit and a hop to the committer: one worker's batches grew
     * from about 3 to about 7 rows, and PostgreSQL's CPU per refund was 0.95x, within reach of the
     * noise (BENCHMARKS.md, "a confirm batch that gathers"). A confirm waits at most this much more,
     * beside a gateway call of tens of milliseconds.
     */
    static final Duration GATHER = Duration.ofMillis(2);

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

    /** A batch failed: each of its confirms is to be written again by its own caller. */
    static final class WriteAlone extends RuntimeException {
        WriteAlone(Throwable cause) {
            super("the confirm batch failed; each confirm is written by itself: " + cause, cause, false, false);
        }
    }

    /** Weak keys: a data source or writes no run uses any more, and its batcher, go. A waiting entry holds both. */
    private static final Map<DataSource, Map<RefundWrites, SharedConfirms>> BY_DATA_SOURCE = new WeakHashMap<>();
    private static final AtomicInteger COMMITTERS = new AtomicInteger();
    private static final Logger LOG = LoggerFactory.getLogger(SharedConfirms.class);

    private final Duration wait;
    /** The confirm places of the runs writing here now: as many confirms as can wait at once. */
    private final AtomicInteger places = new AtomicInteger();
    private final ConfirmBatcher<Entry> batcher = new ConfirmBatcher<>(this::writeOnCommitter, GATHER, places::get);
    private final ThreadPoolExecutor committer = new ThreadPoolExecutor(0, 1, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(),
            runnable -> {
                Thread thread = new Thread(runnable, "fenced-confirm-" + COMMITTERS.incrementAndGet());
                thread.setDaemon(true);
                return thread;
            });

    /** {@code wait}: how long a batch waits for a row lock before each of its confirms is written by itself. */
    SharedConfirms(Duration wait) {
        this.wait = wait;
    }

    /** The confirms of every run writing to {@code dataSource} through {@code writes}. */
    static SharedConfirms of(DataSource dataSource, RefundWrites writes) {
        synchronized (BY_DATA_SOURCE) {
            return BY_DATA_SOURCE.computeIfAbsent(dataSource, d -> new WeakHashMap<>()).computeIfAbsent(writes, w -> new SharedConfirms(TOGETHER_WAIT));
        }
    }

    /** A run with {@code places} confirms at most waiting at once starts writing here: a writer may gather that many more. */
    void runStarted(int places) {
        this.places.addAndGet(places);
    }

    /** A run that {@link #runStarted} has ended: its places no longer count. */
    void runEnded(int places) {
        this.places.addAndGet(-places);
    }

    /** Ends the committer thread once the batches given to it are written. */
    void shutdown() {
        committer.shutdown();
    }

    /** Blocks until the run's confirm of the refund is written; says why it was refused, if it was. */
    Optional<FencedException> confirm(RunWrites run, String refundId, String gatewayReference) throws SQLException {
        try {
            return batcher.confirm(new Entry(run, refundId), gatewayReference);
        } catch (WriteAlone failedTogether) {
            return run.writeConfirmAgain(refundId, gatewayReference);
        }
    }

    /** The batch written on the committer thread; the caller waits for it, also when interrupted: a confirm is not abandoned half-way. */
    private Map<Entry, FencedException> writeOnCommitter(Map<Entry, String> batch) {
        Future<Map<Entry, FencedException>> written = committer.submit(() -> write(batch, wait));
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return written.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
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

    /**
     * Writes the batch in one statement batch bounded by {@code wait}, whether it holds one run's
     * rows or several runs': a batch the committer waits on holds up every confirm behind it.
     *
     * @throws WriteAlone when the batch failed: each confirm is to be written by itself
     */
    static Map<Entry, FencedException> write(Map<Entry, String> batch, Duration wait) {
        Map<RunWrites, Map<String, String>> byRun = new LinkedHashMap<>();
        batch.forEach((entry, reference) -> byRun.computeIfAbsent(entry.run(), run -> new LinkedHashMap<>()).put(entry.refundId(), reference));
        Map<RunWrites, Map<String, FencedException>> refusedByRun;
        try {
            refusedByRun = RunWrites.writeConfirmsTogether(byRun, wait);
        } catch (SQLException | RuntimeException e) {
            // Said once per batch, here: the callers' own writes report what becomes of each row.
            LOG.warn("a confirm batch of {} rows of {} runs failed; each confirm is written again by itself: {}", batch.size(), byRun.size(),
                    Redaction.redactUri(e.toString()));
            throw new WriteAlone(e);
        }
        Map<Entry, FencedException> refusals = new LinkedHashMap<>();
        refusedByRun.forEach((run, refused) -> refused.forEach((refundId, refusal) -> refusals.put(new Entry(run, refundId), refusal)));
        return refusals;
    }
}
