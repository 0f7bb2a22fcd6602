package dev.fenced.bench;

import dev.fenced.fleet.JobStream;
import dev.fenced.fleet.SettlementJobs;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSeeder;
import io.nats.client.JetStreamManagement;
import java.math.BigDecimal;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import javax.sql.DataSource;

/**
 * The fleet run's merchants: seeded with pending refunds, enqueued as jobs, checked sent and paid
 * exactly once, and removed once the run is verified. Every merchant of the run is named after it,
 * so that two runs on one database never share a row. Not thread-safe: the run's thread uses it.
 */
final class FleetMerchants {
    private static final BigDecimal AMOUNT = new BigDecimal("70.25");

    private final String run;
    private final DataSource db;
    private final SettlementJobs jobs;
    private final JobStream stream;
    private final List<String> merchants = new ArrayList<>();

    FleetMerchants(String run, DataSource db, SettlementJobs jobs, JobStream stream) {
        this.run = run;
        this.db = db;
        this.jobs = jobs;
        this.stream = stream;
    }

    /** Seeds {@code count} new merchants of this run, {@code refunds} pending refunds each, four at a time. */
    List<String> seed(String phase, int count, int refunds) throws Exception {
        List<String> seeded = IntStream.range(0, count).mapToObj(i -> String.format("%s_%s_%03d", run, phase, i)).toList();
        BigDecimal total = AMOUNT.multiply(BigDecimal.valueOf(refunds));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> inserts = new ArrayList<>();
            for (String merchant : seeded) {
                inserts.add(pool.submit(() -> RefundSeeder.seed(db, merchant, merchant + "_r", refunds, total, "EUR")));
            }
            for (Future<Integer> insert : inserts) {
                insert.get();
            }
        } finally {
            pool.shutdown();
        }
        merchants.addAll(seeded);
        return seeded;
    }

    void enqueue(List<String> batch) {
        for (String merchant : batch) {
            if (jobs.enqueue(merchant).duplicate()) {
                throw new IllegalStateException("the job of " + merchant + " was already on " + stream.stream());
            }
        }
    }

    void requireAllSent(List<String> batch) throws SQLException {
        try (java.sql.Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT COUNT(*) FILTER (WHERE state = 'sent'), COUNT(*) FROM refund WHERE merchant = ANY(?)")) {
            s.setArray(1, c.createArrayOf("varchar", batch.toArray()));
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                if (rs.getLong(1) != rs.getLong(2)) {
                    throw new IllegalStateException("fleet: only " + rs.getLong(1) + " of " + rs.getLong(2) + " refunds sent once the jobs were acked");
                }
            }
        }
    }

    /** Every refund of the run sent, and at the gateway exactly once: one refund per reference, none other. */
    void verifyExactlyOnce(PaymentGateway gateway, JetStreamManagement management) throws Exception {
        Set<String> ids = new HashSet<>();
        try (java.sql.Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT id, state FROM refund WHERE merchant = ANY(?)")) {
            s.setArray(1, c.createArrayOf("varchar", merchants.toArray()));
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    if (!rs.getString(2).equals("sent")) {
                        throw new IllegalStateException("fleet: refund " + rs.getString(1) + " ended " + rs.getString(2));
                    }
                    ids.add(rs.getString(1));
                }
            }
        }
        List<GatewayRefund> ledger = gateway.ledger();
        Map<String, Long> byReference = ledger.stream().collect(Collectors.groupingBy(GatewayRefund::reference, Collectors.counting()));
        long duplicated = byReference.values().stream().filter(n -> n > 1).count();
        if (duplicated > 0 || !byReference.keySet().equals(ids) || ledger.size() != ids.size()) {
            throw new IllegalStateException("fleet: exactly-once broken: " + ids.size() + " refunds sent, " + ledger.size()
                    + " at the gateway, " + duplicated + " references paid more than once");
        }
        long dead = management.getStreamInfo(stream.deadStream()).getStreamState().getMsgCount();
        if (dead > 0) {
            throw new IllegalStateException("fleet: " + dead + " jobs dead-lettered");
        }
    }

    /**
     * Deletes the run's rows and forgets its merchants' lease keys, once the run is verified: a
     * failed run keeps them, for a look with {@code fenced status} and {@code reconcile}.
     */
    void cleanUp(String redisUrl) throws SQLException {
        try (RedisLeaseStore leases = RedisLeaseStore.builder(redisUrl).build()) {
            for (String merchant : merchants) {
                leases.forget(Merchants.resource(merchant));
            }
        }
        try (java.sql.Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("DELETE FROM refund WHERE merchant = ANY(?)")) {
            s.setArray(1, c.createArrayOf("varchar", merchants.toArray()));
            s.executeUpdate();
        }
    }
}
