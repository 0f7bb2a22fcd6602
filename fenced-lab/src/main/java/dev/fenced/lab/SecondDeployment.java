package dev.fenced.lab;

import dev.fenced.cli.Connections;
import dev.fenced.cli.EventLine;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.embedded.EmbeddedPostgresServer;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.SettlementOutcome;
import java.math.BigDecimal;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The chaos run's {@code key-reuse} fault: a second deployment with a database of its own, whose
 * merchants carry exactly the refund ids of the first deployment's merchants (other amounts), and
 * a worker process of its own, sharing the gateway. Refund ids collide at the gateway on every
 * refund; only the keys each row carries keep the two deployments' money apart.
 */
final class SecondDeployment implements AutoCloseable {
    private static final String DATABASE = "deploy2";
    private static final int JOBS = 2;

    private final HikariDataSource db;
    private final List<String> merchants;
    private final List<String> args;
    private final Map<String, String> env;
    private final Consumer<EventLine> history;
    private final Deque<String> queue = new ArrayDeque<>();
    private final Set<String> handedOut = new HashSet<>();
    private final AtomicInteger capacity = new AtomicInteger();
    private final long silenceLimitMillis;
    private final Consumer<String> say;
    private volatile long lastEventAt = System.currentTimeMillis();
    private WorkerProcess worker;

    private SecondDeployment(HikariDataSource db, List<String> merchants, Map<String, String> env, ChaosSettings settings,
                             Consumer<EventLine> history, Consumer<String> say) {
        this.db = db;
        this.say = say;
        // As the first deployment's queue does with a silent holder, but for the whole process: it has no stand-in.
        this.silenceLimitMillis = Math.max(10_000, 5 * settings.ttl().toMillis());
        this.merchants = merchants;
        this.env = env;
        this.history = history;
        this.queue.addAll(merchants);
        this.args = new ArrayList<>(List.of("chaos-worker", "--name", "deploy2", "--ttl", settings.ttl().toMillis() + "ms",
                "--jobs", Integer.toString(JOBS), "--concurrency", Integer.toString(settings.concurrency())));
        if (!settings.fencing()) {
            args.add("--no-fence");
        }
        this.worker = startWorker();
    }

    private WorkerProcess startWorker() {
        capacity.set(0);
        return WorkerProcess.start("deploy2", args, env, this::onEvent);
    }

    /**
     * Creates the second database and seeds one merchant for each of the first deployment's first
     * (up to) three merchants, with the same refund ids, then starts its worker.
     */
    static SecondDeployment start(EmbeddedPostgresServer postgres, Map<String, String> env, ChaosSettings settings,
                                  List<String> firstMerchants, Consumer<EventLine> history, Consumer<String> say) {
        try (Connection c = java.sql.DriverManager.getConnection(postgres.jdbcUrl()); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + DATABASE);
        } catch (SQLException e) {
            throw new IllegalStateException("could not create the second deployment's database: " + e.getMessage(), e);
        }
        String url = postgres.jdbcUrl(DATABASE);
        HikariDataSource db = Connections.database(url, 3);
        List<String> merchants = new ArrayList<>();
        for (String first : firstMerchants.subList(0, Math.min(3, firstMerchants.size()))) {
            String merchant = "k" + first.substring(1);
            RefundSeeder.seed(db, merchant, first + "_r", settings.refunds(),
                    new BigDecimal("80.75").multiply(BigDecimal.valueOf(settings.refunds())), "EUR");
            merchants.add(merchant);
        }
        Map<String, String> ownEnv = new HashMap<>(env);
        ownEnv.put("FENCED_DB_URL", url);
        return new SecondDeployment(db, merchants, ownEnv, settings, history, say);
    }

    HikariDataSource db() {
        return db;
    }

    List<String> merchants() {
        return merchants;
    }

    private void onEvent(EventLine line) {
        lastEventAt = System.currentTimeMillis();
        if (line instanceof EventLine.Ready) {
            capacity.incrementAndGet();
            return;
        }
        history.accept(line);
        if (line instanceof EventLine.Result result) {
            synchronized (queue) {
                handedOut.remove(result.merchant());
                if (result.result() != SettlementOutcome.Result.COMPLETED) {
                    queue.addLast(result.merchant()); // not done: the queue hands it out again
                }
            }
        }
    }

    /**
     * Hands queued jobs to the worker while it has room. A worker that died (a fault hit its
     * start-up) or holds jobs without a sign of life for too long is replaced, and its jobs queued again.
     */
    void dispatch() {
        synchronized (queue) {
            boolean silent = !handedOut.isEmpty() && System.currentTimeMillis() - lastEventAt > silenceLimitMillis;
            if (!worker.isAlive() || silent) {
                say.accept("second deployment's worker " + (silent ? "silent" : "gone") + ", replaced: " + worker.stderrTail());
                worker.close();
                queue.addAll(handedOut);
                handedOut.clear();
                lastEventAt = System.currentTimeMillis();
                worker = startWorker();
            }
            while (capacity.get() > 0 && !queue.isEmpty()) {
                String merchant = queue.pollFirst();
                try {
                    worker.writeLine(merchant);
                } catch (UncheckedIOException gone) {
                    queue.addFirst(merchant); // replaced at the next dispatch
                    return;
                }
                capacity.decrementAndGet();
                handedOut.add(merchant);
            }
        }
    }

    /** True when no refund of this deployment is pending or sending; requeues its merchants otherwise. */
    boolean drained() throws SQLException {
        Map<String, Long> unsettled = JobQueue.unsettledByMerchant(db);
        synchronized (queue) {
            if (queue.isEmpty() && handedOut.isEmpty()) {
                queue.addAll(unsettled.keySet());
            }
        }
        return unsettled.isEmpty();
    }

    @Override
    public void close() {
        worker.closeStdin();
        try {
            worker.awaitExit(Duration.ofSeconds(20));
        } catch (IllegalStateException stuck) {
            worker.close();
        }
        db.close();
    }
}
