package dev.fenced.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FencedExecutor;
import dev.fenced.FencedObserver;
import dev.fenced.Lease;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.FencedTransactions;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Runs on a real Redis and PostgreSQL through an {@link ObservationRegistry} with two handlers: one
 * that keeps every finished observation with its parent (what a tracer sees) and Micrometer's meter
 * handler (what Boot's metrics see). The task's own observation nests in the run; a refused write
 * is a refusal inside the run it ended.
 */
class FencedObservationsTest {
    private static HikariDataSource db;

    @BeforeAll
    static void start() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestDatabases.postgresUrl());
        config.setMaximumPoolSize(4);
        db = new HikariDataSource(config);
        FencedSchema.migrate(db);
    }

    @AfterAll
    static void stop() {
        db.close();
    }

    /** Every stopped observation, in the order they stopped. */
    static final class Finished implements ObservationHandler<Observation.Context> {
        final List<Observation.Context> contexts = new CopyOnWriteArrayList<>();

        @Override
        public void onStop(Observation.Context context) {
            contexts.add(context);
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }

        Observation.Context only(String name) {
            List<Observation.Context> named = contexts.stream().filter(c -> c.getName().equals(name)).toList();
            assertThat(named).as(name).hasSize(1);
            return named.get(0);
        }

        void clear() {
            contexts.clear();
        }
    }

    @Test
    void aRunIsOneObservationThatHoldsItsAcquisitionTheTaskAndItsRefusal() {
        ObservationRegistry registry = ObservationRegistry.create();
        Finished finished = new Finished();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        registry.observationConfig().observationHandler(finished).observationHandler(new DefaultMeterObservationHandler(meters));
        FencedObserver observations = FencedObservations.in(registry);
        String resource = "obs:" + UUID.randomUUID();

        try (RedisLeaseStore leases = RedisLeaseStore.builder(TestRedis.uri()).observer(observations).build()) {
            FencedExecutor executor = FencedExecutor.builder(leases).ttl(Duration.ofSeconds(5)).observer(observations).build();
            FencedTransactions transactions = FencedTransactions.create().observedBy(observations);

            // Executed: the task's own observation (its database call, say) is a child of the run.
            long token = executor.execute(resource, lease -> Observation.createNotStarted("app.write", registry)
                    .observe(() -> transactions.inTransaction(db, resource, lease.token(), c -> lease.token()))).orThrow();
            Observation.Context run = finished.only(FencedObservations.RUN);
            assertThat(run.getLowCardinalityKeyValue("status").getValue()).isEqualTo("executed");
            assertThat(run.getHighCardinalityKeyValue("fenced.resource").getValue()).isEqualTo(resource);
            assertThat(run.getError()).isNull();
            Observation.Context acquire = finished.only(FencedObservations.ACQUIRE);
            assertThat(acquire.getLowCardinalityKeyValue("outcome").getValue()).isEqualTo("granted");
            assertThat(acquire.getParentObservation().getContextView()).isSameAs(run);
            assertThat(finished.only("app.write").getParentObservation().getContextView()).as("the task's span nests in the run").isSameAs(run);
            assertThat(registry.getCurrentObservation()).as("nothing left open on the thread").isNull();

            // Fenced out: a newer holder entered; the refusal is inside the run it ended.
            finished.clear();
            transactions.inTransaction(db, resource, token + 1_000, c -> null);
            FencedExecutor.Outcome<Object> refused = executor.execute(resource,
                    lease -> transactions.inTransaction(db, resource, lease.token(), c -> null));
            assertThat(refused.status()).isEqualTo(FencedExecutor.Status.FENCED_OUT);
            Observation.Context fencedOut = finished.only(FencedObservations.RUN);
            assertThat(fencedOut.getLowCardinalityKeyValue("status").getValue()).isEqualTo("fenced_out");
            assertThat(fencedOut.getError()).as("the run's span is marked failed, with the refusal").isSameAs(refused.failure());
            Observation.Context refusal = finished.only(FencedObservations.REFUSAL);
            assertThat(refusal.getLowCardinalityKeyValue("operation").getValue()).isEqualTo("transaction");
            assertThat(refusal.getHighCardinalityKeyValue("fenced.stored_fence").getValue()).isEqualTo(Long.toString(token + 1_000));
            assertThat(refusal.getParentObservation().getContextView()).isSameAs(fencedOut);

            // Busy: another holder has the lease.
            finished.clear();
            try (Lease held = leases.tryAcquire(resource, Duration.ofSeconds(5)).orElseThrow()) {
                assertThat(executor.execute(resource, Lease::token).status()).isEqualTo(FencedExecutor.Status.BUSY);
            }
            assertThat(finished.only(FencedObservations.RUN).getLowCardinalityKeyValue("status").getValue()).isEqualTo("busy");
            assertThat(finished.only(FencedObservations.ACQUIRE).getLowCardinalityKeyValue("outcome").getValue()).isEqualTo("busy");
        }

        // The same instrumentation as timers, tagged by outcome and never by resource.
        assertThat(meters.get(FencedObservations.RUN).tag("status", "executed").timer().count()).isEqualTo(1);
        assertThat(meters.get(FencedObservations.RUN).tag("status", "fenced_out").timer().count()).isEqualTo(1);
        assertThat(meters.get(FencedObservations.REFUSAL).tag("operation", "transaction").timer().count()).isEqualTo(1);
        assertThat(meters.getMeters()).allSatisfy(meter -> assertThat(meter.getId().getTag("fenced.resource")).isNull());
    }
}
