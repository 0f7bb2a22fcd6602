package dev.fenced.lab;

import dev.fenced.cli.EventLine;
import dev.fenced.cli.UsageException;
import dev.fenced.gateway.GatewayConfig;
import dev.fenced.gateway.PaymentGateway;
import dev.fenced.LeaseView;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSeeder;
import dev.fenced.settlement.RefundSummary;
import dev.fenced.settlement.SettlementEvent.Type;
import dev.fenced.settlement.WebhookReceiver;
import dev.fenced.stripe.StripeRefundGateway;
import dev.fenced.stripe.StripeWebhookEvents;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

/**
 * The article's worked example, for real, under one {@link Mechanism}: worker A (token 33) is
 * frozen with SIGSTOP when it reaches the stalled refund; its lease expires; worker B (token 34),
 * handed the job by "the queue", takes over; A is resumed with SIGCONT. What the gateway and the
 * database then hold is the measurement ({@link DemoTally}). Every time is the article's divided by the speed.
 */
final class Scenario {
    static final String MERCHANT = "m_4471";
    private static final Duration TIMEOUT = Duration.ofMinutes(5);

    /** How many refunds and their total; the article's are 1,200 and 84,300.00 EUR, stalled at r_815. */
    record Story(int refunds, BigDecimal total) {
        static final Story ARTICLE = new Story(1200, new BigDecimal("84300.00"));

        /** r_815 in the article's story; the same fraction of the way through a smaller one. */
        String stalledRefund() {
            return refundAt(815);
        }

        /** With {@link Provider#STRIPE}: r_1100, whose customer's card was closed; the same fraction of a smaller story. */
        String failsAfterSuccess() {
            return refundAt(1100);
        }

        private String refundAt(int articleIndex) {
            int index = (int) Math.max(1, Math.min(refunds, Math.round(refunds * (double) articleIndex / 1200)));
            return RefundSeeder.refundId(index);
        }
    }

    /** How the workers pay. */
    enum Provider {
        /** The simulated gateway's own API, final at the first answer. */
        SIMULATOR,
        /**
         * Stripe's official library against the simulated gateway's Stripe surface: a charge per
         * refund, refunds pending until they settle, news by signed webhook, and one refund that
         * fails after it succeeded ({@link Story#failsAfterSuccess()}).
         */
        STRIPE
    }

    /** How long a refund stays pending at the provider, in article time. */
    private static final Duration ARTICLE_SETTLE_AFTER = Duration.ofSeconds(10);
    /** The demo's webhook secret, its own. */
    private static final String WEBHOOK_SECRET = "whsec_fenced_demo_4471";
    /** How long the news may take after the workers exit: the last refund's settle and failure, and the gateway's retries. */
    private static final Duration NEWS_TIMEOUT = Duration.ofMinutes(2);

    private final double speed;
    private final Mechanism mechanism;
    private final Story story;
    private final PrintStream progress;
    private final Provider provider;
    private final List<TimelineEntry> notes = new CopyOnWriteArrayList<>();
    private long startMillis;

    static double requireValidSpeed(double speed) {
        if (!(speed >= 1 && speed <= 100)) {
            throw new UsageException("--speed must be between 1 and 100, got " + speed);
        }
        return speed;
    }

    Scenario(double speed, Mechanism mechanism, Story story, PrintStream progress) {
        this(speed, mechanism, story, progress, Provider.SIMULATOR);
    }

    Scenario(double speed, Mechanism mechanism, Story story, PrintStream progress, Provider provider) {
        this.speed = requireValidSpeed(speed);
        this.mechanism = mechanism;
        this.story = story;
        this.progress = progress;
        this.provider = provider;
    }

    private Duration scaled(Duration articleTime) {
        return Duration.ofMillis(Math.max(1, Math.round(articleTime.toMillis() / speed)));
    }

    private void note(String what, long token) {
        TimelineEntry entry = new TimelineEntry(System.currentTimeMillis() - startMillis, TimelineEntry.ORCHESTRATOR, what, null, token, null);
        notes.add(entry);
        if (progress != null) {
            progress.printf("  %7.2fs  %-4s %s%n", entry.elapsedMs() / 1000.0, TimelineEntry.ORCHESTRATOR, what);
        }
    }

    /** Plays the story once and reports what the gateway, the database and the workers saw. */
    DemoReport run(ScenarioServers servers) {
        Path directory;
        try {
            directory = Files.createTempDirectory("fenced-scenario");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        GatewayConfig.Builder config = GatewayConfig.builder().latency(scaled(Duration.ofMillis(20))).idempotency(mechanism.idempotency())
                .ledgerFile(directory.resolve("gateway-ledger.jsonl"));
        // Started first, so that their lines come with the other servers' before the story begins.
        try (LabWebhooks news = provider == Provider.STRIPE
                     ? LabWebhooks.start(servers.db, WEBHOOK_SECRET, StripeWebhookEvents::read, this::heard) : null;
             PaymentGateway gateway = PaymentGateway.start(news == null ? config.build() : config.apiKey(StripeCharges.API_KEY)
                     .lifecycle(scaled(ARTICLE_SETTLE_AFTER), 0).webhooks(news.url(), WEBHOOK_SECRET).build())) {
            if (progress != null) {
                progress.printf("  %-9s %s%n", "gateway", "embedded simulated gateway on " + gateway.url().substring("http://".length())
                        + (news == null ? "" : ", Stripe-shaped (/v1), paid through Stripe's official library, webhooks to "
                        + news.url().getAuthority()));
            }
            startMillis = System.currentTimeMillis();
            String resource = Merchants.resource(MERCHANT);
            servers.resetForNextRun(resource);
            LeaseView before = servers.lease(resource);
            if (before.highestTokenIssued() > 32) {
                // Only a given store keeps tokens from an earlier run: embedded ones are new or reset.
                throw new UsageException("the tokens for " + resource + " are already at " + before.highestTokenIssued() + " in "
                        + servers.backend.label() + " from " + servers.leaseSource.origin() + "; the story needs a fresh one: "
                        + servers.leaseSource.freshAdvice());
            }
            try {
                RefundSeeder.seed(servers.db, MERCHANT, story.refunds(), story.total(), "EUR");
            } catch (IllegalStateException e) { // the merchant's rows are there: only in a given database, embedded ones are new or reset
                throw new UsageException(e.getMessage() + " in the database from " + servers.dbSource.origin()
                        + "; the story needs a fresh one: " + servers.dbSource.freshAdvice());
            }
            servers.tokensAbove(resource, 32);
            note("seeded " + MERCHANT + ": " + story.refunds() + " refunds, " + story.total() + " EUR; tokens above 32", 0);
            Path charges = null;
            if (news != null) {
                charges = directory.resolve("charges.csv");
                StripeCharges.create(gateway.url(), servers.db, MERCHANT, story.failsAfterSuccess(), charges);
                note("made " + story.refunds() + " charges through Stripe's library, one per refund; " + story.failsAfterSuccess()
                        + "'s on " + StripeCharges.REFUND_FAIL_CARD + " (Stripe's test card whose refunds fail after they succeed)", 0);
            }
            DemoReport report = play(servers, resource, gateway, charges);
            return news == null ? report : awaitNews(servers, gateway, news, charges, report);
        }
    }

    /** A webhook delivery's receipt: the stalled refund's and the failing refund's news go on the timeline. */
    private void heard(WebhookReceiver.Receipt receipt) {
        boolean moved = receipt.outcome() == WebhookReceiver.Outcome.SETTLED || receipt.outcome() == WebhookReceiver.Outcome.RETURNED;
        if (moved && (story.stalledRefund().equals(receipt.refundId()) || story.failsAfterSuccess().equals(receipt.refundId()))) {
            note("webhook " + receipt.eventId() + ": " + receipt.message(), 0);
        }
    }

    /**
     * Waits until the gateway delivered, or gave up, every event (bounded), polls the rows still
     * {@code sent} through Stripe's library, and adds what the news did to the report.
     */
    private DemoReport awaitNews(ScenarioServers servers, PaymentGateway gateway, LabWebhooks news, Path charges, DemoReport report) {
        await(() -> gateway.webhookStats().waiting() == 0, NEWS_TIMEOUT, "the gateway's webhooks (" + gateway.webhookStats() + ")");
        StripeRefundGateway stripe = StripeRefundGateway.builder().apiKey(StripeCharges.API_KEY).apiBase(URI.create(gateway.url()))
                .charges(StripeCharges.resolver(charges)).timeout(Duration.ofSeconds(10)).build();
        int byPoll = LabWebhooks.pollAll(servers.db, stripe);
        Map<String, Long> rows = RefundSummary.of(servers.db, MERCHANT).rowsByState();
        Map<String, String> returned = returnedRows(servers);
        Map<String, Integer> deliveries = new TreeMap<>();
        news.outcomes().forEach((outcome, count) -> deliveries.put(outcome.name().toLowerCase(Locale.ROOT), count));
        note("the provider's word: " + rows.getOrDefault("settled", 0L) + " settled, " + returned.size() + " returned ("
                + String.join(", ", returned.keySet()) + "), " + byPoll + " by the poll after the webhooks", 0);
        return report.withNews(new DemoReport.ProviderNews("stripe", deliveries, rows.getOrDefault("settled", 0L), returned, byPoll), rows,
                notes);
    }

    private static Map<String, String> returnedRows(ScenarioServers servers) {
        Map<String, String> returned = new TreeMap<>();
        try (Connection c = servers.db.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT id, failure_reason FROM refund WHERE merchant = ? AND state = 'returned'")) {
            s.setString(1, MERCHANT);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    returned.put(rs.getString(1), rs.getString(2));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("reading the returned refunds failed: " + e.getMessage(), e);
        }
        return returned;
    }

    private DemoReport play(ScenarioServers servers, String resource, PaymentGateway gateway, Path charges) {
        String stalled = story.stalledRefund();
        Duration ttl = scaled(mechanism.articleTtl());
        Map<String, String> env = workerEnvironment(servers, gateway);
        List<String> common = new ArrayList<>(List.of("lab-settle", "--merchant", MERCHANT, "--ttl", ttl.toMillis() + "ms", "--events"));
        common.addAll(mechanism.workerFlags());
        if (charges != null) {
            common.addAll(List.of("--stripe-api-base", gateway.url(), "--stripe-charges", charges.toString()));
            Map<String, String> withKey = new HashMap<>(env);
            withKey.put(StripeCharges.API_KEY_VARIABLE, StripeCharges.API_KEY);
            env = Map.copyOf(withKey);
        }
        List<String> argsA = new ArrayList<>(common);
        argsA.addAll(List.of("--name", "A", "--pause-at", mechanism.pausePhase() + ":" + stalled));
        List<String> argsB = new ArrayList<>(common);
        argsB.addAll(List.of("--name", "B", "--start-on-stdin"));

        long pausedAt;
        long resumedAt;
        try (WorkerProcess a = WorkerProcess.start("A", argsA, env)) {
            note("worker A started as process " + a.pid() + " (" + mechanism.label() + ", lease TTL " + ttl.toMillis() + " ms)", 0);
            a.awaitEvent(Events.ofType(Type.BREAKPOINT), TIMEOUT, "the breakpoint at " + stalled);
            a.signal("STOP");
            await(a::isStopped, Duration.ofSeconds(10), "worker A to stop");
            pausedAt = System.currentTimeMillis();
            long tokenA = a.firstEvent(Events.ofType(Type.ACQUIRED)).map(Events::token).orElse(0L);
            note("SIGSTOP worker A at " + mechanism.pausePhase() + " " + stalled + ": the whole JVM, renewal thread included, is frozen", tokenA);
            a.writeLine("continue"); // read only when A runs again

            try (WorkerProcess b = WorkerProcess.start("B", argsB, env)) {
                await(() -> !servers.lease(resource).held(), TIMEOUT, "A's lease to expire");
                note(servers.backend.label() + " expired A's lease " + resource, tokenA);
                WorkerProcess.sleep(scaled(Duration.ofSeconds(1)).toMillis());
                note("the queue redelivers the job to worker B (process " + b.pid() + ")", 0);
                b.writeLine("go");
                EventLine acquiredB = b.awaitEvent(Events.ofType(Type.ACQUIRED), TIMEOUT, "its lease");
                b.awaitEvent(Events.ofType(Type.CONFIRMED, Type.FAILED).and(Events.about(stalled)), TIMEOUT, "its confirm of " + stalled);
                long resumeAt = acquiredB.at() + scaled(Duration.ofSeconds(3)).toMillis();
                await(() -> System.currentTimeMillis() >= resumeAt, TIMEOUT, "the resume time");
                a.signal("CONT");
                resumedAt = System.currentTimeMillis();
                note("SIGCONT worker A: it wakes up believing it still holds the lease", tokenA);
                int exitA = a.awaitExit(TIMEOUT);
                int exitB = b.awaitExit(TIMEOUT);
                note("workers exited: A with " + exitA + ", B with " + exitB, 0);
                return new DemoTally(mechanism, speed, story, startMillis).report(gateway.ledger(),
                        RefundSummary.of(servers.db, MERCHANT).rowsByState(), DemoTally.Worker.of(a, exitA), DemoTally.Worker.of(b, exitB),
                        pausedAt, resumedAt, notes);
            }
        }
    }

    /** Kills a holder with SIGKILL and measures how long the merchant stays blocked: the outage a TTL costs. */
    double measureCrashOutageArticleSeconds(ScenarioServers servers) {
        String resource = Merchants.resource(MERCHANT);
        servers.resetForNextRun(resource);
        RefundSeeder.seed(servers.db, MERCHANT, story.refunds(), story.total(), "EUR");
        try (PaymentGateway gateway = PaymentGateway.start(GatewayConfig.builder().latency(scaled(Duration.ofMillis(20)))
                .idempotency(mechanism.idempotency()).build())) {
            Map<String, String> env = workerEnvironment(servers, gateway);
            List<String> args = new ArrayList<>(List.of("lab-settle", "--merchant", MERCHANT, "--events", "--name", "crashing",
                    "--ttl", scaled(mechanism.articleTtl()).toMillis() + "ms"));
            args.addAll(mechanism.workerFlags());
            try (WorkerProcess worker = WorkerProcess.start("crashing", args, env)) {
                worker.awaitEvent(Events.ofType(Type.CLAIMED), TIMEOUT, "its first claim");
                worker.signal("KILL");
                long killedAt = System.nanoTime();
                worker.awaitExit(Duration.ofSeconds(30));
                await(() -> !servers.lease(resource).held(), Duration.ofMinutes(10), "the dead holder's lease to expire");
                return articleSeconds((System.nanoTime() - killedAt) / 1_000_000, speed);
            }
        }
    }

    private static Map<String, String> workerEnvironment(ScenarioServers servers, PaymentGateway gateway) {
        Map<String, String> env = new HashMap<>(servers.leaseEnvironment());
        env.put("FENCED_DB_URL", servers.dbUrl);
        env.put("FENCED_GATEWAY_URL", gateway.url());
        return Map.copyOf(env);
    }

    /** Real milliseconds at this speed, in article seconds to one decimal. */
    static double articleSeconds(long realMillis, double speed) {
        return BigDecimal.valueOf(realMillis * speed / 1000.0).setScale(1, RoundingMode.HALF_UP).doubleValue();
    }

    private static void await(BooleanSupplier condition, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out waiting for " + what);
            }
            WorkerProcess.sleep(5);
        }
    }
}
