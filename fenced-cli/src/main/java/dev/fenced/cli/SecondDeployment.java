package dev.fenced.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.embedded.EmbeddedPostgresServer;
import dev.fenced.settlement.RefundSeeder;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
    private final WorkerProcess worker;
    private final Deque<String> queue = new ArrayDeque<>();
    private final AtomicInteger capacity = new AtomicInteger();

    private SecondDeployment(HikariDataSource db, List<String> merchants, Map<String, String> env, ChaosHarness.Settings settings,
                             Consumer<JsonNode> history) {
        this.db = db;
        this.merchants = merchants;
        this.queue.addAll(merchants);
        List<String> args = new ArrayList<>(List.of("chaos-worker", "--name", "deploy2", "--ttl", settings.ttl().toMillis() + "ms",
                "--jobs", Integer.toString(JOBS), "--concurrency", Integer.toString(settings.concurrency())));
        if (!settings.fencing()) {
            args.add("--no-fence");
        }
        this.worker = WorkerProcess.start("deploy2", args, env, event -> onEvent(event, history));
    }

    /**
     * Creates the second database and seeds one merchant for each of the first deployment's first
     * (up to) three merchants, with the same refund ids, then starts its worker.
     */
    static SecondDeployment start(EmbeddedPostgresServer postgres, Map<String, String> env, ChaosHarness.Settings settings,
                                  List<String> firstMerchants, Consumer<JsonNode> history) {
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
        return new SecondDeployment(db, merchants, ownEnv, settings, history);
    }

    HikariDataSource db() {
        return db;
    }

    List<String> merchants() {
        return merchants;
    }

    private void onEvent(JsonNode event, Consumer<JsonNode> history) {
        String type = event.path("type").asText();
        if (type.equals("ready")) {
            capacity.incrementAndGet();
            return;
        }
        history.accept(event);
        if (type.equals("result") && !event.path("result").asText().equals("COMPLETED")) {
            synchronized (queue) {
                queue.addLast(event.path("merchant").asText()); // not done: the queue hands it out again
            }
        }
    }

    /** Hands queued jobs to the worker while it has room. */
    void dispatch() {
        synchronized (queue) {
            while (capacity.get() > 0 && !queue.isEmpty()) {
                capacity.decrementAndGet();
                worker.writeLine(queue.pollFirst());
            }
        }
    }

    /** True when no refund of this deployment is pending or sending; requeues its merchants otherwise. */
    boolean drained() throws SQLException {
        Map<String, Long> unsettled = ChaosHarness.unsettledByMerchant(db);
        synchronized (queue) {
            if (queue.isEmpty() && capacity.get() == JOBS) {
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
