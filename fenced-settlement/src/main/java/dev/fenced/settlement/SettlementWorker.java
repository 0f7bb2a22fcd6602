package dev.fenced.settlement;

import dev.fenced.FenceViolation;
import dev.fenced.Lease;
import dev.fenced.LeaseArguments;
import dev.fenced.LeaseStore;
import dev.fenced.LeaseWatchdog;
import dev.fenced.provider.RefundGateway;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;

/**
 * Settles one merchant's refunds the article's way: take the lease {@code settle:<merchant>} and
 * its token; for each refund not yet sent, claim it with the token (fenced), call the gateway with
 * the refund id as idempotency key, confirm with the same token (fenced). A row found in
 * {@code sending} is first looked up at the gateway, since a call for it may already have gone out.
 *
 * <p>With more than one refund in flight, the pending rows are claimed {@code concurrency} at a
 * time in one fenced statement, while the previous ones are in flight, and the confirms of refunds
 * that finish together are written in one batch (each row still checked by its own fenced UPDATE);
 * a refund's in-flight place goes to the next one as soon as its gateway call has answered. A stop
 * leaves at most three times {@code concurrency} claimed rows unconfirmed (claimed ahead, in
 * flight, or waiting for their confirm: each is bounded by {@code concurrency}, and all three can be
 * full at once); the next holder looks each one up at the gateway.
 *
 * <p>A {@link FenceViolation} abandons the batch at once: no retry, no further claim. A lost lease
 * (the watchdog) stops new claims. A row an earlier holder finished after this run read it (its
 * fence below this token, its state sent or failed) is skipped, not a violation; one it finished as
 * failed makes the run {@link SettlementOutcome.Result#REJECTED}, as a refusal of this run's own would.
 *
 * <p>Every gateway call and lookup carries the row's own idempotency key, and a row changes state
 * only on a definitive answer ({@link GatewayAnswer}): a matching refund confirms it; a refusal, or
 * a refund that does not match the row, marks it {@code failed} with the reason; an answer in doubt
 * leaves it {@code sending} for a lookup; a request that never left puts it back to
 * {@code pending}. A row whose first attempt is older than the provider's key retention less a
 * margin ({@link Builder#keyRetention}) is never sent again blind. Retries are bounded, with backoff and jitter. After {@code gatewayFailureLimit}
 * refunds in a row end without an answer, the worker stops claiming, lets what is in flight end,
 * releases its lease and reports {@link SettlementOutcome.Result#GATEWAY_UNAVAILABLE}: an outage
 * never marks a refund failed.
 *
 * <p>The fence makes the rows safe; the idempotency key makes the gateway call safe. Neither the
 * lease nor the watchdog does. One worker instance settles one merchant at a time; it is not
 * meant to be shared between threads.
 */
public final class SettlementWorker {
    /** The most refunds one run keeps in flight under its token ({@link Builder#concurrency}). */
    public static final int MAX_CONCURRENCY = 256;
    /**
     * Where a {@link PhaseHook} is called, and what the id it is handed names ({@link #subject()}):
     * per refund right after its claim, right after the gateway answered, right before the confirm
     * UPDATE (after the lease check, when there is one); inside each claim's transaction, its rows
     * locked and not yet committed (with the first row's id); and once per run in the journal's
     * transaction, with the merchant.
     */
    public enum Phase {
        AFTER_CLAIM(Subject.REFUND),
        AFTER_GATEWAY(Subject.REFUND),
        BEFORE_CONFIRM(Subject.REFUND),
        IN_JOURNAL(Subject.MERCHANT),
        IN_CLAIM(Subject.REFUND);

        private final Subject subject;

        Phase(Subject subject) {
            this.subject = subject;
        }

        /** What the id handed to {@link PhaseHook#reached} names at this phase. */
        public Subject subject() {
            return subject;
        }

        /** What a phase is about: one refund (its id) or the whole run (the merchant's id). */
        public enum Subject { REFUND, MERCHANT }
    }

    /**
     * Called at each {@link Phase}, on the thread doing that step, for tests and the lab to pause or
     * cue the worker there. It observes; what it does (a pause, a kill) is not undone by the worker.
     */
    @FunctionalInterface
    public interface PhaseHook {
        /**
         * {@code subjectId} is the refund's id, or the merchant's for a phase whose {@link Phase#subject()} is
         * {@link Phase.Subject#MERCHANT} ({@link Phase#IN_JOURNAL}).
         */
        void reached(Phase phase, String subjectId);
    }

    private final LeaseStore leases;
    private final Duration ttl;
    private final boolean renewal;
    private final WorkerEvents events;
    private final RunSettings settings;

    private SettlementWorker(Builder b) {
        this.leases = Objects.requireNonNull(b.leases, "leaseStore");
        DataSource dataSource = Objects.requireNonNull(b.dataSource, "dataSource");
        RefundGateway gateway = Objects.requireNonNull(b.gateway, "gateway");
        this.ttl = LeaseArguments.requireValidTtl(b.ttl);
        requireValidConcurrency(b.concurrency);
        if (b.gatewayAttempts < 1 || b.gatewayAttempts > 20) {
            throw new IllegalArgumentException("gateway attempts must be 1 to 20, got " + b.gatewayAttempts);
        }
        if (b.gatewayBackoff == null || b.gatewayBackoff.isNegative() || b.gatewayBackoff.compareTo(Duration.ofSeconds(10)) > 0) {
            throw new IllegalArgumentException("gateway backoff must be 0 to 10 s, got " + b.gatewayBackoff);
        }
        if (b.gatewayFailureLimit < 1 || b.gatewayFailureLimit > 1000) {
            throw new IllegalArgumentException("gateway failure limit must be 1 to 1000, got " + b.gatewayFailureLimit);
        }
        this.renewal = b.variant.renewal();
        this.events = new WorkerEvents(b.name, b.listener, b.clock);
        KeyRetention keyRetention = new KeyRetention(b.keyRetention, b.keyRetentionMargin, b.clock);
        gateway.callTimeout().ifPresent(timeout -> keyRetention.requireRetriesFit(
                GatewayCalls.longestCreate(b.gatewayAttempts, b.gatewayBackoff, timeout),
                b.gatewayAttempts + " attempts and a lookup of at most " + timeout + " each, with backoff"));
        this.settings = new RunSettings(dataSource, gateway, b.concurrency, b.gatewayAttempts, b.gatewayBackoff, b.gatewayFailureLimit, b.variant.writes(), b.variant.checkBeforeWrite(),
                b.hook, b.journal, keyRetention);
    }

    /**
     * Returns {@code concurrency} when a worker accepts it: 1 to {@link #MAX_CONCURRENCY}.
     *
     * @throws IllegalArgumentException "concurrency must be 1 to 256, got N"
     */
    public static int requireValidConcurrency(int concurrency) {
        if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
            throw new IllegalArgumentException("concurrency must be 1 to " + MAX_CONCURRENCY + ", got " + concurrency);
        }
        return concurrency;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Runs one settlement of {@code merchant} and says how it ended; never throws for a violation.
     * An interrupt of the calling thread while the refunds are settled is a stop, as in
     * {@link #settle(String, BooleanSupplier)}; the thread's interrupt flag is set again on return.
     */
    public SettlementOutcome settle(String merchant) {
        return settle(merchant, () -> false);
    }

    /**
     * As {@link #settle(String)}, and stops early once {@code stopRequested} says so (a draining
     * process): no new claim, the refunds in flight finish and are confirmed, rows claimed but
     * never sent go back to {@code pending}, the lease is released, and the outcome is
     * {@link SettlementOutcome.Result#STOPPED} when rows are left for the next run.
     */
    public SettlementOutcome settle(String merchant, BooleanSupplier stopRequested) {
        Objects.requireNonNull(stopRequested, "stopRequested");
        String resource = Merchants.resource(merchant);
        if (!RefundSummary.exists(settings.dataSource(), merchant)) {
            return SettlementOutcome.noRefunds(merchant);
        }
        long asked = events.millis();
        Optional<Lease> acquired = leases.tryAcquire(resource, ttl);
        if (acquired.isEmpty()) {
            events.emit(resource, SettlementEvent.Type.BUSY, null, 0, resource);
            return SettlementOutcome.leaseBusy(merchant);
        }
        Lease lease = acquired.get();
        long token = lease.token();
        long granted = events.millis();
        events.emit(resource, SettlementEvent.Type.ACQUIRED, null, token, resource + " in " + (granted - asked) + " ms", granted);
        AtomicBoolean leaseLost = new AtomicBoolean();
        SettlementRun run = new SettlementRun(lease, settings, reporter(resource, token), leaseLost, stopRequested);
        LeaseWatchdog watchdog = !renewal ? null : LeaseWatchdog.start(lease, ttl, (l, cause) -> {
            leaseLost.set(true);
            events.emit(resource, SettlementEvent.Type.LEASE_LOST, null, token, cause == null ? "lease gone" : cause.getMessage());
        });
        boolean released;
        try {
            run.settle(merchant);
        } catch (RuntimeException | SQLException e) {
            run.failedToRead(merchant, e);
        } finally {
            if (watchdog != null) {
                watchdog.close();
            }
            released = safeRelease(lease);
            events.emit(resource, SettlementEvent.Type.RELEASED, null, token, released ? "released" : "already gone");
        }
        SettlementOutcome outcome = run.outcome(merchant, !released);
        events.emit(resource, SettlementEvent.Type.OUTCOME, null, token, outcome.result().name());
        if (run.interrupted()) {
            Thread.currentThread().interrupt(); // kept down by the run until the lease was released
        }
        return outcome;
    }

    /** How a run under {@code token} reports to this worker's listener and log, and has a lagging counter raised. */
    private RunReporter reporter(String resource, long token) {
        return new RunReporter() {
            @Override
            public void event(SettlementEvent.Type type, String subjectId, String detail) {
                events.emit(resource, type, subjectId, token, detail);
            }

            @Override
            public void gatewayAnswered(GatewayAnswer.Kind kind) {
                events.gatewayAnswered(kind);
            }

            @Override
            public void fenceAheadOfCounter(long storedFence) {
                raiseCounter(resource, storedFence);
            }
        };
    }

    private void raiseCounter(String resource, long storedFence) {
        try {
            leases.observeStoredFence(resource, storedFence);
        } catch (RuntimeException e) {
            events.emit(resource, SettlementEvent.Type.ERROR, null, 0, "could not raise the counter: " + e.getMessage());
        }
    }

    private boolean safeRelease(Lease lease) {
        try {
            return lease.release();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Configures a {@link SettlementWorker}. */
    public static final class Builder {
        private LeaseStore leases;
        private DataSource dataSource;
        private RefundGateway gateway;
        private Duration ttl = Duration.ofSeconds(30);
        private int concurrency = 1;
        private int gatewayAttempts = 3;
        private Duration gatewayBackoff = Duration.ofMillis(100);
        private int gatewayFailureLimit = 3;
        private WorkerVariant variant = WorkerVariant.ARTICLE;
        private String name = "worker";
        private SettlementListener listener = event -> { };
        private PhaseHook hook = (phase, id) -> { };
        private Clock clock = Clock.systemUTC();
        private SettlementJournal journal;
        private Duration keyRetention = KeyRetention.DEFAULT_RETENTION;
        private Duration keyRetentionMargin = KeyRetention.DEFAULT_MARGIN;

        public Builder leaseStore(LeaseStore leases) {
            this.leases = leases;
            return this;
        }

        /** The database holding the {@code refund} table; a pool of at least concurrency + 2 connections. */
        public Builder dataSource(DataSource dataSource) {
            this.dataSource = dataSource;
            return this;
        }

        /** The payment provider: {@code GatewayClient} for the simulated one, or the application's own. */
        public Builder gateway(RefundGateway gateway) {
            this.gateway = gateway;
            return this;
        }

        /** The lease TTL; 30 s by default, as in the article. */
        public Builder ttl(Duration ttl) {
            this.ttl = ttl;
            return this;
        }

        /** Refunds in flight at once under the one token; 1 by default. */
        public Builder concurrency(int concurrency) {
            this.concurrency = concurrency;
            return this;
        }

        /** Gateway attempts per refund, with the same idempotency key; 3 by default. */
        public Builder gatewayAttempts(int gatewayAttempts) {
            this.gatewayAttempts = gatewayAttempts;
            return this;
        }

        /** The first retry's delay, doubled for each later one up to 2 s, with jitter; 100 ms by default. */
        public Builder gatewayBackoff(Duration gatewayBackoff) {
            this.gatewayBackoff = gatewayBackoff;
            return this;
        }

        /**
         * How many refunds in a row may end without an answer from the gateway (after their retries)
         * before the worker stops claiming and reports the gateway unavailable; 3 by default.
         */
        public Builder gatewayFailureLimit(int gatewayFailureLimit) {
            this.gatewayFailureLimit = gatewayFailureLimit;
            return this;
        }

        /** The article's design by default; another only to measure what a weaker mechanism loses (see {@link WorkerVariant}). */
        public Builder variant(WorkerVariant variant) {
            this.variant = Objects.requireNonNull(variant, "variant");
            return this;
        }

        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        public Builder listener(SettlementListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        public Builder phaseHook(PhaseHook hook) {
            this.hook = Objects.requireNonNull(hook, "hook");
            return this;
        }

        /**
         * A second store to write: at the end of each run, the journal lines the merchant's
         * confirmed refunds lack, in one transaction fenced with the run's token. None by default.
         */
        public Builder journal(SettlementJournal journal) {
            this.journal = journal;
            return this;
        }

        /**
         * How long the provider keeps an idempotency key ({@code retention}; Stripe's 24 hours by
         * default) and how far from its end the worker stops trusting a row's key ({@code margin};
         * 1 hour by default). A row first claimed longer than {@code retention - margin} ago is
         * never sent again: it is looked up by reference ({@code RefundGateway.findByReference}) and
         * confirmed when its refund is found, or left in {@code sending} for an operator. No retry
         * starts past that point, and when the gateway says how long a call may take
         * ({@code RefundGateway.callTimeout}) the build refuses a margin one refund's attempts could
         * outlast. Rows are aged by the database and compared on {@link #clock}.
         */
        public Builder keyRetention(Duration retention, Duration margin) {
            this.keyRetention = retention;
            this.keyRetentionMargin = margin;
            return this;
        }

        /**
         * The clock that stamps events and ages the rows' first attempts; the system's by default. Leases
         * expire by the store's clock, not this one.
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        public SettlementWorker build() {
            return new SettlementWorker(this);
        }
    }
}
