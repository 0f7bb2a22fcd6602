package dev.fenced.lab;

import dev.fenced.cli.Connections;
import dev.fenced.cli.EventLine;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.settlement.RefundSeeder;
import io.nats.client.Connection;
import java.math.BigDecimal;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The chaos run's {@code key-reuse} fault: a second deployment with a database of its own, whose
 * merchants carry exactly the refund ids of the first deployment's merchants (other amounts), a
 * job stream of its own and a worker process of its own, sharing the gateway, Redis and NATS.
 * Refund ids collide at the gateway on every refund; only the keys each row carries keep the two
 * deployments' money apart.
 */
final class SecondDeployment implements AutoCloseable {
    private static final String DATABASE = "deploy2";
    private static final int JOBS = 2;

    private final HikariDataSource db;
    private final List<String> merchants;
    private final JobQueue queue;
    private final List<String> args;
    private final Map<String, String> env;
    private final Consumer<EventLine> history;
    private final Consumer<String> say;
    private WorkerProcess worker;

    private SecondDeployment(HikariDataSource db, List<String> merchants, JobQueue queue, Map<String, String> env, ChaosSettings settings,
                             Consumer<EventLine> history, Consumer<String> say) {
        this.db = db;
        this.merchants = merchants;
        this.queue = queue;
        this.env = env;
        this.history = history;
        this.say = say;
        this.args = ChaosWorkers.args(settings, "deploy2", queue.stream(), JOBS);
        this.worker = WorkerProcess.start("deploy2", args, env, history);
    }

    /** How many merchants the second deployment has beside a first one with {@code firstMerchants}. */
    static int merchantCount(int firstMerchants) {
        return Math.min(3, firstMerchants);
    }

    /**
     * Creates the second database and seeds one merchant for each of the first deployment's first
     * (up to) three merchants, with the same refund ids, publishes their jobs on a stream of its
     * own ({@code stream}), then starts its worker.
     */
    static SecondDeployment start(ChaosDatabase postgres, Map<String, String> env, ChaosSettings settings, List<String> firstMerchants,
                                  Connection broker, String stream, Consumer<EventLine> history, Consumer<String> say) {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(postgres.jdbcUrl()); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + DATABASE);
        } catch (SQLException e) {
            throw new IllegalStateException("could not create the second deployment's database: " + e.getMessage(), e);
        }
        String url = postgres.jdbcUrl(DATABASE);
        HikariDataSource db = Connections.database(url, 3);
        List<String> merchants = new ArrayList<>();
        for (String first : firstMerchants.subList(0, merchantCount(firstMerchants.size()))) {
            String merchant = "k" + first.substring(1);
            RefundSeeder.seed(db, merchant, first + "_r", settings.refunds(),
                    new BigDecimal("80.75").multiply(BigDecimal.valueOf(settings.refunds())), "EUR");
            merchants.add(merchant);
        }
        JobQueue queue = JobQueue.create(broker, stream, settings);
        queue.publish(merchants);
        Map<String, String> ownEnv = new HashMap<>(env);
        ownEnv.put("FENCED_DB_URL", url);
        ownEnv.remove("FENCED_JOURNAL_DB_URL"); // the journal's checks are the main deployment's; its merchant ids are its own
        return new SecondDeployment(db, merchants, queue, ownEnv, settings, history, say);
    }

    HikariDataSource db() {
        return db;
    }

    List<String> merchants() {
        return merchants;
    }

    JobQueue queue() {
        return queue;
    }

    /** Replaces its worker when it died (a fault hit its start-up): nothing else takes this deployment's jobs. */
    void tend() {
        if (!worker.isAlive()) {
            say.accept("second deployment's worker gone, replaced: " + worker.stderrTail());
            worker = WorkerProcess.start("deploy2", args, env, history);
        }
    }

    /** True when no refund of this deployment is pending or sending. */
    boolean settled() throws SQLException {
        return JobQueue.unsettledByMerchant(db).isEmpty();
    }

    /** Drains its worker with SIGTERM, as the first deployment's. */
    void stopWorker() {
        ChaosWorkers.terminate(worker);
        ChaosWorkers.awaitExit(worker);
    }

    @Override
    public void close() {
        stopWorker();
        queue.close();
        db.close();
    }
}
