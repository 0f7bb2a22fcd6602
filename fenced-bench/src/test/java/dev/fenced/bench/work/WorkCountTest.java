package dev.fenced.bench.work;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.Lease;
import dev.fenced.gateway.GatewayClient;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.jdbc.JdbcFenceFloor;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.RefundGateway;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSchema;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.SettlementOutcome;
import dev.fenced.settlement.SettlementWorker;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.event.command.CommandFailedEvent;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import io.lettuce.core.event.command.CommandSucceededEvent;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The regression gate that counts work instead of time, so a noisy machine cannot hide a slip: a
 * settlement of real refunds against Redis, PostgreSQL and the gateway over HTTP, with the database
 * round trips, the statements prepared, the gateway calls and the Redis commands counted per
 * refund and per acquisition, the bytes the JVM allocated per refund, and the times its threads
 * gave up the CPU to wait (with one and with eight refunds in flight). Each must stay at or
 * under its budget in {@code work-budget.properties}; a change that lowers one lowers the budget
 * with it (BENCHMARKS.md, "Work per refund"). Counts are exact; the allocation budget carries a
 * margin, as JIT and GC make it move a little between runs.
 */
class WorkCountTest {
    private static final int REFUNDS = 600;
    private static HikariDataSource pool;

    @BeforeAll
    static void start() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestDatabases.postgresUrl());
        config.setMaximumPoolSize(8);
        pool = new HikariDataSource(config);
        RefundSchema.migrate(pool);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    /** A real gateway client, its calls counted. */
    static final class CountingGateway implements RefundGateway {
        private final RefundGateway real;
        final AtomicLong calls = new AtomicLong();

        CountingGateway(RefundGateway real) {
            this.real = real;
        }

        @Override
        public GatewayRefund createRefund(String key, String reference, String merchant, BigDecimal amount, String currency) {
            calls.incrementAndGet();
            return real.createRefund(key, reference, merchant, amount, currency);
        }

        @Override
        public GatewayRefund createRefund(String key, String reference, String merchant, BigDecimal amount, String currency,
                                          Map<String, String> metadata) {
            calls.incrementAndGet();
            return real.createRefund(key, reference, merchant, amount, currency, metadata);
        }

        @Override
        public Optional<GatewayRefund> findByKey(String key) {
            calls.incrementAndGet();
            return real.findByKey(key);
        }

        @Override
        public List<GatewayRefund> refundsOf(String merchant) {
            calls.incrementAndGet();
            return real.refundsOf(merchant);
        }
    }

    /** Counts the commands a Lettuce client sends. */
    static final class CountingCommands implements CommandListener {
        final AtomicLong started = new AtomicLong();

        @Override
        public void commandStarted(CommandStartedEvent event) {
            started.incrementAndGet();
        }

        @Override
        public void commandSucceeded(CommandSucceededEvent event) {
        }

        @Override
        public void commandFailed(CommandFailedEvent event) {
        }
    }

    @Test
    void aSettlementStaysWithinItsWorkBudget() throws Exception {
        Properties budget = budget();
        CountingDataSource db = new CountingDataSource(pool);
        CountingCommands commands = new CountingCommands();
        RedisClient client = RedisClient.create(TestRedis.uri());
        client.addListener(commands);
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(Duration.ZERO).build());
             RedisLeaseStore leases = RedisLeaseStore.builder(client)
                     .tokens(TokenPolicy.redisCounter(JdbcFenceFloor.of(pool, RefundSchema.table(), Merchants::merchantOf))).build()) {
            CountingGateway calls = new CountingGateway(GatewayClient.of(gateway.url(), Duration.ofSeconds(5)));
            SettlementWorker worker = SettlementWorker.builder().leaseStore(leases).dataSource(db).gateway(calls)
                    .ttl(Duration.ofMinutes(5)).build(); // no renewal falls inside a run: the count stays exact on a slow machine

            // A first merchant warms the JIT up, so the allocations counted are a warm worker's.
            settle(worker, REFUNDS);
            db.roundTrips.set(0);
            db.prepared.set(0);
            calls.calls.set(0);
            commands.started.set(0);
            // Read outside the allocation's window: a reading of /proc allocates a buffer per thread.
            long switchesBefore = voluntarySwitches();
            long allocatedBefore = allocatedBytes();
            settle(worker, REFUNDS);
            long allocated = allocatedBytes() - allocatedBefore;
            double switches = (double) (voluntarySwitches() - switchesBefore) / REFUNDS;
            double roundTrips = (double) db.roundTrips.get() / REFUNDS;
            double prepared = (double) db.prepared.get() / REFUNDS;
            double gatewayCalls = (double) calls.calls.get() / REFUNDS;
            long redisPerRun = commands.started.get();
            double kibPerRefund = allocated / 1024.0 / REFUNDS;
            // The same with 8 in flight, where a run's tasks wait for places and its confirms go to the process's committer.
            SettlementWorker parallel = SettlementWorker.builder().leaseStore(leases).dataSource(pool).gateway(calls)
                    .ttl(Duration.ofMinutes(5)).concurrency(8).build();
            settle(parallel, REFUNDS);
            switchesBefore = voluntarySwitches();
            settle(parallel, REFUNDS);
            double switchesInParallel = (double) (voluntarySwitches() - switchesBefore) / REFUNDS;

            // Acquisition alone: take and release one lease, many times.
            commands.started.set(0);
            String resource = Merchants.resource(settle(worker, 1));
            commands.started.set(0);
            for (int i = 0; i < 100; i++) {
                Lease lease = leases.tryAcquire(resource, Duration.ofSeconds(5)).orElseThrow();
                lease.release();
            }
            double redisPerCycle = commands.started.get() / 100.0;

            System.out.printf("work per refund (%d refunds): %.3f database round trips, %.3f statements prepared, %.3f gateway calls,"
                            + " %.1f KiB allocated, %.2f voluntary context switches (%.2f with 8 in flight); %d Redis commands per run;"
                            + " %.2f per acquire+release%n",
                    REFUNDS, roundTrips, prepared, gatewayCalls, kibPerRefund, switches, switchesInParallel, redisPerRun, redisPerCycle);
            // Per refund to three decimals, as the budget states them (1,803 round trips for 600 refunds: 3.005).
            assertThat(threeDecimals(roundTrips)).as("database round trips per refund").isLessThanOrEqualTo(limit(budget, "db.roundTrips.perRefund"));
            assertThat(threeDecimals(prepared)).as("statements prepared per refund").isLessThanOrEqualTo(limit(budget, "db.prepared.perRefund"));
            assertThat(threeDecimals(gatewayCalls)).as("gateway calls per refund").isLessThanOrEqualTo(limit(budget, "gateway.calls.perRefund"));
            assertThat((double) redisPerRun).as("Redis commands per settlement run").isLessThanOrEqualTo(limit(budget, "redis.commands.perRun"));
            assertThat(redisPerCycle).as("Redis commands per acquire + release").isLessThanOrEqualTo(limit(budget, "redis.commands.perAcquireRelease"));
            assertThat(kibPerRefund).as("KiB allocated per refund").isLessThanOrEqualTo(limit(budget, "jvm.allocatedKiB.perRefund"));
            if (switchesBefore >= 0) {
                assertThat(switches).as("voluntary context switches per refund").isLessThanOrEqualTo(limit(budget, "jvm.voluntarySwitches.perRefund"));
                assertThat(switchesInParallel).as("voluntary context switches per refund, 8 in flight")
                        .isLessThanOrEqualTo(limit(budget, "jvm.voluntarySwitches.perRefund.inFlight8"));
            }
        } finally {
            client.shutdown();
        }
    }

    /** Settles a new merchant of {@code refunds} refunds, all sent; returns the merchant. */
    private String settle(SettlementWorker worker, int refunds) {
        String merchant = "m_w" + UUID.randomUUID().toString().substring(0, 8);
        RefundSeeder.seed(pool, merchant, merchant + "_r", refunds, new BigDecimal(refunds).multiply(new BigDecimal("70.25")), "EUR");
        SettlementOutcome outcome = worker.settle(merchant);
        assertThat(outcome.sent()).as(outcome.toString()).isEqualTo(refunds);
        return merchant;
    }

    private static double threeDecimals(double value) {
        return Math.round(value * 1000) / 1000.0;
    }

    /** Every byte every thread of this JVM allocated so far (HotSpot's count). */
    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getTotalThreadAllocatedBytes();
    }

    /**
     * The times this JVM's threads gave up the CPU to wait (a park, a socket read with nothing to
     * read): Linux's count per thread, summed over the threads alive now; -1 without {@code /proc}.
     * Every hand-over between threads costs at least one. A thread that ended since an earlier
     * reading takes its count with it, so read both ends of a window in which no thread ends.
     */
    private static long voluntarySwitches() throws IOException {
        Path tasks = Path.of("/proc/self/task");
        if (!Files.isDirectory(tasks)) {
            return -1;
        }
        long sum = 0;
        try (Stream<Path> threads = Files.list(tasks)) {
            for (Path thread : (Iterable<Path>) threads::iterator) {
                try {
                    for (String line : Files.readAllLines(thread.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")) {
                            sum += Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                        }
                    }
                } catch (NoSuchFileException ended) {
                    // ended between the listing and the read
                }
            }
        }
        return sum;
    }

    private static Properties budget() throws IOException {
        Properties budget = new Properties();
        try (InputStream in = WorkCountTest.class.getResourceAsStream("work-budget.properties")) {
            budget.load(in);
        }
        return budget;
    }

    private static double limit(Properties budget, String key) {
        String value = budget.getProperty(key);
        assertThat(value).as("work-budget.properties has " + key).isNotNull();
        return Double.parseDouble(value);
    }
}
