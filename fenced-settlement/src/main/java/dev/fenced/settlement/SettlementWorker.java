package dev.fenced.settlement;

import dev.fenced.FenceViolation;
import dev.fenced.FencedException;
import dev.fenced.Lease;
import dev.fenced.LeaseArguments;
import dev.fenced.LeaseStore;
import dev.fenced.LeaseWatchdog;
import dev.fenced.gateway.GatewayRefund;
import dev.fenced.gateway.RefundGateway;
import dev.fenced.settlement.SettlementOutcome.Result;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
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
 * leaves fewer than three times {@code concurrency} claimed rows unconfirmed (claimed ahead, in
 * flight, or waiting for their confirm); the next holder looks each one up at the gateway.
 *
 * <p>A {@link FenceViolation} abandons the batch at once: no retry, no further claim. A lost lease
 * (the watchdog) stops new claims. A row an earlier holder finished after this run read it (its
 * fence below this token, its state sent or failed) is skipped, not a violation.
 *
 * <p>Every gateway call and lookup carries the row's own idempotency key, and a row changes state
 * only on a definitive answer ({@link GatewayAnswer}): a matching refund confirms it; a refusal, or
 * a refund that does not match the row, marks it {@code failed} with the reason; an answer in doubt
 * leaves it {@code sending} for a lookup; a request that never left puts it back to
 * {@code pending}. Retries are bounded, with backoff and jitter. After {@code gatewayFailureLimit}
 * refunds in a row end without an answer, the worker stops claiming, lets what is in flight end,
 * releases its lease and reports {@link SettlementOutcome.Result#GATEWAY_UNAVAILABLE}: an outage
 * never marks a refund failed.
 *
 * <p>The fence makes the rows safe; the idempotency key makes the gateway call safe. Neither the
 * lease nor the watchdog does. One worker instance settles one merchant at a time; it is not
 * meant to be shared between threads.
 */
public final class SettlementWorker {
    /**
     * Where a test or the demo may stop the worker: right after a claim, right after the gateway
     * answered, right before the confirm UPDATE (after the lease check, when there is one).
     */
    public enum Phase { AFTER_CLAIM, AFTER_GATEWAY, BEFORE_CONFIRM }

    /** Called at each {@link Phase} for each refund, on the worker's thread. */
    @FunctionalInterface
    public interface PhaseHook {
        void reached(Phase phase, String refundId);
    }

    private final LeaseStore leases;
    private final DataSource dataSource;
    private final RefundGateway gateway;
    private final Duration ttl;
    private final int concurrency;
    private final int gatewayAttempts;
    private final Duration gatewayBackoff;
    private final int gatewayFailureLimit;
    private final RefundWrites writes;
    private final boolean renewal;
    private final boolean checkBeforeWrite;
    private final String name;
    private final SettlementListener listener;
    private final PhaseHook hook;
    private final Clock clock;

    private SettlementWorker(Builder b) {
        this.leases = Objects.requireNonNull(b.leases, "leaseStore");
        this.dataSource = Objects.requireNonNull(b.dataSource, "dataSource");
        this.gateway = Objects.requireNonNull(b.gateway, "gateway");
        this.ttl = LeaseArguments.requireValidTtl(b.ttl);
        if (b.concurrency < 1 || b.concurrency > 256) {
            throw new IllegalArgumentException("concurrency must be 1 to 256, got " + b.concurrency);
        }
        this.concurrency = b.concurrency;
        if (b.gatewayAttempts < 1 || b.gatewayAttempts > 20) {
            throw new IllegalArgumentException("gateway attempts must be 1 to 20, got " + b.gatewayAttempts);
        }
        this.gatewayAttempts = b.gatewayAttempts;
        if (b.gatewayBackoff == null || b.gatewayBackoff.isNegative() || b.gatewayBackoff.compareTo(Duration.ofSeconds(10)) > 0) {
            throw new IllegalArgumentException("gateway backoff must be 0 to 10 s, got " + b.gatewayBackoff);
        }
        this.gatewayBackoff = b.gatewayBackoff;
        if (b.gatewayFailureLimit < 1 || b.gatewayFailureLimit > 1000) {
            throw new IllegalArgumentException("gateway failure limit must be 1 to 1000, got " + b.gatewayFailureLimit);
        }
        this.gatewayFailureLimit = b.gatewayFailureLimit;
        this.writes = b.fencing ? RefundWrites.fenced() : RefundWrites.unfenced();
        this.renewal = b.renewal;
        this.checkBeforeWrite = b.checkBeforeWrite;
        this.name = b.name;
        this.listener = b.listener;
        this.hook = b.hook;
        this.clock = b.clock;
    }

    public static Builder builder() {
        return new Builder();
    }

    @FunctionalInterface
    private interface TransactionWork<T> {
        T run(Connection connection) throws SQLException;
    }

    /** One confirm waiting in a group commit, and its answer once written. */
    private static final class PendingConfirm {
        final String gatewayReference;
        boolean done;
        FencedException refusal;
        Throwable failure;

        PendingConfirm(String gatewayReference) {
            this.gatewayReference = gatewayReference;
        }

        void finish(FencedException refusal, Throwable failure) {
            this.refusal = refusal;
            this.failure = failure;
            this.done = true;
        }

        Optional<FencedException> result() throws SQLException {
            if (failure instanceof SQLException e) {
                throw e;
            }
            if (failure instanceof RuntimeException e) {
                throw e;
            }
            if (failure != null) {
                throw new IllegalStateException("the confirm batch failed: " + failure, failure);
            }
            return Optional.ofNullable(refusal);
        }
    }

    /** One in-flight place, given back once however the refund ends. */
    private static final class Slot {
        private final Semaphore slots;
        private final AtomicBoolean freed = new AtomicBoolean();

        Slot(Semaphore slots) {
            this.slots = slots;
        }

        void free() {
            if (freed.compareAndSet(false, true)) {
                slots.release();
            }
        }
    }

    /**
     * Hands a refund whose gateway call has answered from its in-flight slot to one of
     * {@code concurrency} places waiting for a confirm, so that the next refund can go out while
     * this one is written, and no more than that many confirms wait at once.
     */
    private record ConfirmGate(Slot slot, Semaphore confirming) {
        void enter() {
            confirming.acquireUninterruptibly();
            slot.free();
        }

        void leave() {
            confirming.release();
        }
    }

    /** Runs one settlement of {@code merchant} and says how it ended; never throws for a violation. */
    public SettlementOutcome settle(String merchant) {
        String resource = Merchants.resource(merchant);
        Optional<Lease> acquired = leases.tryAcquire(resource, ttl);
        if (acquired.isEmpty()) {
            emit("busy", null, 0, resource);
            return new SettlementOutcome(Result.LEASE_BUSY, merchant, 0, 0, 0, 0, 0, 0, null, null);
        }
        Lease lease = acquired.get();
        long token = lease.token();
        emit("acquired", null, token, resource);
        AtomicBoolean leaseLost = new AtomicBoolean();
        Run run = new Run(lease, leaseLost);
        LeaseWatchdog watchdog = !renewal ? null : LeaseWatchdog.start(lease, ttl, (l, cause) -> {
            leaseLost.set(true);
            emit("lease-lost", null, token, cause == null ? "lease gone" : cause.getMessage());
        });
        try {
            run.settle(merchant);
        } catch (RuntimeException | SQLException e) {
            run.error.compareAndSet(null, e.getMessage());
        } finally {
            if (watchdog != null) {
                watchdog.close();
            }
            boolean released = safeRelease(lease);
            emit("released", null, token, released ? "released" : "already gone");
        }
        SettlementOutcome outcome = run.outcome(merchant);
        emit("outcome", null, token, outcome.result().name());
        return outcome;
    }

    private void raiseCounter(String resource, long storedFence) {
        try {
            leases.observeStoredFence(resource, storedFence);
        } catch (RuntimeException e) {
            emit("error", null, 0, "could not raise the counter: " + e.getMessage());
        }
    }

    private boolean safeRelease(Lease lease) {
        try {
            return lease.release();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** The state of one run: its counters and why it stopped. */
    private final class Run {
        final Lease lease;
        final long token;
        final AtomicBoolean leaseLost;
        final AtomicReference<FenceViolation> violation = new AtomicReference<>();
        final AtomicReference<String> error = new AtomicReference<>();
        final AtomicInteger sent = new AtomicInteger();
        final AtomicInteger recovered = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final AtomicInteger gatewayFailuresInARow = new AtomicInteger();
        final AtomicBoolean gatewayDown = new AtomicBoolean();
        final Set<String> skipped = ConcurrentHashMap.newKeySet();
        final Confirmations confirmations = new Confirmations();
        final GatewayCalls calls = new GatewayCalls(gateway, gatewayAttempts, gatewayBackoff, this::stopped);
        int read;

        Run(Lease lease, AtomicBoolean leaseLost) {
            this.lease = lease;
            this.token = lease.token();
            this.leaseLost = leaseLost;
        }

        /** The check-before-write mechanism: GET the lease before a write; a hint, not a fence. */
        boolean stillHeld(String refundId) {
            if (!checkBeforeWrite) {
                return true;
            }
            if (lease.isHeld()) {
                return true;
            }
            leaseLost.set(true);
            emit("lease-lost", refundId, token, "check before write found the lease gone");
            return false;
        }

        boolean stopped() {
            return violation.get() != null || error.get() != null || leaseLost.get() || gatewayDown.get();
        }

        /** Counts refunds that ended without an answer from the gateway; enough in a row stop the run. */
        void gatewayAnswer(String refundId, GatewayAnswer answer) {
            if (answer.gatewayAnswered()) {
                gatewayFailuresInARow.set(0);
            } else if (gatewayFailuresInARow.incrementAndGet() >= gatewayFailureLimit && gatewayDown.compareAndSet(false, true)) {
                emit("gateway-down", refundId, token, gatewayFailuresInARow.get() + " refunds in a row without an answer: "
                        + answer.reason());
            }
        }

        void settle(String merchant) throws SQLException {
            List<RefundRow> rows = unsettled(merchant);
            read = rows.size();
            // With more than one in flight, a refund's slot is freed once its gateway call has
            // answered (its confirm then waits in the group commit on its own thread), and the next
            // rows are claimed while the current ones are in flight: neither database round trip
            // holds up the next gateway call. With one in flight every step waits for the last.
            boolean pipelined = concurrency > 1;
            ExecutorService pool = Executors.newFixedThreadPool(pipelined ? 2 * concurrency : 1, runnable -> {
                Thread thread = new Thread(runnable, "settle-" + merchant);
                thread.setDaemon(true);
                return thread;
            });
            Semaphore inFlight = new Semaphore(concurrency);
            Semaphore confirming = new Semaphore(concurrency);
            Set<String> claimedAhead = new HashSet<>();
            try {
                for (int i = 0; i < rows.size(); i++) {
                    RefundRow row = rows.get(i);
                    boolean claimNow = row.pending() && !claimedAhead.contains(row.id()) && !skipped.contains(row.id());
                    if (pipelined && claimNow && (stopped() || !claimAhead(rows, i, claimedAhead))) {
                        break;
                    }
                    if (skipped.contains(row.id())) {
                        continue;
                    }
                    inFlight.acquireUninterruptibly();
                    Slot slot = new Slot(inFlight);
                    if (stopped() || (!pipelined && claimNow && !claimAhead(rows, i, claimedAhead))) {
                        slot.free();
                        break;
                    }
                    if (skipped.contains(row.id())) {
                        slot.free();
                        continue;
                    }
                    claimedAhead.remove(row.id());
                    pool.execute(() -> {
                        try {
                            process(row, row.pending(), pipelined ? new ConfirmGate(slot, confirming) : null);
                        } catch (FenceViolation v) {
                            refused(row.id(), v);
                        } catch (RuntimeException | SQLException e) {
                            failedWith(row.id(), e);
                        } finally {
                            slot.free();
                        }
                    });
                }
            } finally {
                pool.shutdown();
                awaitQuietly(pool);
            }
            if (gatewayDown.get() && violation.get() == null) {
                for (String id : claimedAhead) {
                    try {
                        putBack(id, "claimed, never sent before the gateway went down");
                    } catch (FenceViolation v) {
                        refused(id, v);
                    } catch (RuntimeException | SQLException e) {
                        failedWith(id, e);
                    }
                }
            }
        }

        /**
         * Claims the pending rows from {@code from} on, one per in-flight slot, in one fenced
         * statement, just before the first of them is sent: one round trip and one commit for
         * {@code concurrency} claims. All or none: a refusal rolls the others back and stops the run;
         * a row an earlier holder finished is skipped.
         */
        boolean claimAhead(List<RefundRow> rows, int from, Set<String> claimedAhead) {
            List<String> ids = new ArrayList<>();
            for (int i = from; i < rows.size() && ids.size() < concurrency; i++) {
                if (rows.get(i).pending() && !skipped.contains(rows.get(i).id())) {
                    ids.add(rows.get(i).id());
                }
            }
            if (!stillHeld(ids.get(0))) {
                return false;
            }
            List<String> claimed;
            try {
                claimed = claim(ids);
            } catch (RuntimeException | SQLException e) {
                failedWith(ids.get(0), e);
                return false;
            }
            if (claimed == null) {
                return false;
            }
            claimedAhead.addAll(claimed);
            claimed.forEach(id -> emit("claimed", id, token, null));
            return true;
        }

        /** A fenced write was refused: a violation stops the run; a missing row is an error. */
        void refused(String refundId, FencedException refusal) {
            if (!(refusal instanceof FenceViolation v)) {
                failedWith(refundId, refusal);
                return;
            }
            violation.compareAndSet(null, v);
            emit("violation", refundId, token, "stored fence " + v.storedFence() + ", state " + v.storedState());
            if (v.storedFence() != null && v.storedFence() > token) {
                // The counter is behind the rows (a lagging replica was promoted): raise it, or
                // every later holder is refused the same way.
                raiseCounter(lease.resource(), v.storedFence());
            }
        }

        void failedWith(String refundId, Exception e) {
            error.compareAndSet(null, refundId + ": " + e.getMessage());
            emit("error", refundId, token, e.getMessage());
        }

        /**
         * {@code claimed} is false for a row found in {@code sending}: it is looked up, then claimed
         * alone. {@code gate} is null when the refund keeps its slot until its confirm is written.
         */
        void process(RefundRow row, boolean claimed, ConfirmGate gate) throws SQLException {
            GatewayAnswer answer = null;
            if (!claimed) {
                // A call for this row may have gone out before its holder stopped: ask first, under the row's key.
                answer = calls.lookup(row);
                gatewayAnswer(row.id(), answer);
                emit("checked", row.id(), token,
                        answer.refund() != null ? "exists " + answer.refund().id() : answer.kind().name().toLowerCase(Locale.ROOT));
                if (!answer.gatewayAnswered()) {
                    emit("left", row.id(), token, "sending: the lookup got no answer: " + answer.reason());
                    return;
                }
                if (!stillHeld(row.id())) {
                    return;
                }
                List<String> taken = claim(List.of(row.id()));
                if (taken == null || taken.isEmpty()) {
                    return;
                }
                emit("claimed", row.id(), token, null);
            }
            hook.reached(Phase.AFTER_CLAIM, row.id());
            if (violation.get() != null) {
                return; // another row proved this holder stale: leave the claim for the next holder to look up
            }
            if (answer != null && answer.kind() == GatewayAnswer.Kind.SUCCEEDED) {
                recovered.incrementAndGet();
            } else if (answer == null || answer.kind() == GatewayAnswer.Kind.ABSENT) {
                if (!stillHeld(row.id())) {
                    return;
                }
                answer = calls.create(row);
                gatewayAnswer(row.id(), answer);
            }
            switch (answer.kind()) {
                case SUCCEEDED -> confirm(row, answer.refund(), gate);
                case REJECTED -> markFailed(row.id(), answer.reason());
                case UNAVAILABLE -> putBack(row.id(), "the gateway was unavailable: " + answer.reason());
                default -> emit("left", row.id(), token, "sending: the outcome is in doubt: " + answer.reason());
            }
        }

        void confirm(RefundRow row, GatewayRefund refund, ConfirmGate gate) throws SQLException {
            emit("gateway", row.id(), token, refund.id());
            hook.reached(Phase.AFTER_GATEWAY, row.id());
            if (!stillHeld(row.id())) {
                return;
            }
            hook.reached(Phase.BEFORE_CONFIRM, row.id());
            Optional<FencedException> refusal;
            if (gate != null) {
                gate.enter();
            }
            try {
                refusal = confirmations.confirm(row.id(), refund.id());
            } finally {
                if (gate != null) {
                    gate.leave();
                }
            }
            if (refusal.isPresent()) {
                refused(row.id(), refusal.get());
                return;
            }
            sent.incrementAndGet();
            emit("confirmed", row.id(), token, refund.id());
        }

        /** A definitive refusal: the claimed row becomes failed with the reason, under the same fence as a confirm. */
        void markFailed(String refundId, String reason) throws SQLException {
            try (Connection connection = dataSource.getConnection()) {
                writes.fail(connection, refundId, token, reason);
            }
            failed.incrementAndGet();
            emit("failed", refundId, token, reason);
        }

        /** Nothing of the claimed row reached the gateway: back to pending, fenced, for the next run. */
        void putBack(String refundId, String why) throws SQLException {
            try (Connection connection = dataSource.getConnection()) {
                writes.release(connection, refundId, token);
            }
            emit("left", refundId, token, "pending: " + why);
        }

        /**
         * Claims the rows in one transaction and returns the ids claimed; null when a row was
         * refused (the claim is rolled back whole and the refusal recorded). A row an earlier holder
         * finished is left out and counted as skipped.
         */
        List<String> claim(List<String> ids) throws SQLException {
            List<String> finishedEarlier = new ArrayList<>();
            Map<String, FencedException> refusals = inTransaction(connection -> {
                Map<String, FencedException> refused = new LinkedHashMap<>();
                writes.claimAll(connection, ids, token).forEach((id, refusal) -> {
                    if (finishedByAnEarlierHolder(refusal)) {
                        finishedEarlier.add(id);
                    } else {
                        refused.put(id, refusal);
                    }
                });
                if (!refused.isEmpty()) {
                    finishedEarlier.clear();
                    connection.rollback();
                }
                return refused;
            });
            if (!refusals.isEmpty()) {
                Map.Entry<String, FencedException> first = refusals.entrySet().iterator().next();
                refused(first.getKey(), first.getValue());
                return null;
            }
            for (String id : finishedEarlier) {
                skipped.add(id);
                emit("skipped", id, token, "finished by an earlier holder");
            }
            List<String> claimed = new ArrayList<>(ids);
            claimed.removeAll(finishedEarlier);
            return claimed;
        }

        /** A lower token finished the row after this run read it: not stale, just done. */
        boolean finishedByAnEarlierHolder(FencedException refusal) {
            return refusal instanceof FenceViolation v && v.storedFence() != null && v.storedFence() < token
                    && ("sent".equals(v.storedState()) || "failed".equals(v.storedState()));
        }

        <T> T inTransaction(TransactionWork<T> work) throws SQLException {
            try (Connection connection = dataSource.getConnection()) {
                connection.setAutoCommit(false);
                try {
                    T result = work.run(connection);
                    connection.commit();
                    return result;
                } catch (SQLException | RuntimeException e) {
                    try {
                        connection.rollback();
                    } catch (SQLException rollbackFailed) {
                        e.addSuppressed(rollbackFailed);
                    }
                    throw e;
                } finally {
                    connection.setAutoCommit(true);
                }
            }
        }

        /**
         * Confirms from the worker's threads, written together (group commit): a thread that
         * finds no write running writes every confirm waiting, in one JDBC batch, while the others
         * wait for their answer. Each row keeps its own fenced UPDATE; the batch shares only the
         * round trip. With one refund in flight a batch is that one confirm.
         */
        final class Confirmations {
            private final Object lock = new Object();
            private Map<String, PendingConfirm> waiting = new LinkedHashMap<>();
            private boolean writing;

            /** Blocks until the confirm is written; says why it was refused, if it was. */
            Optional<FencedException> confirm(String refundId, String gatewayReference) throws SQLException {
                PendingConfirm mine = new PendingConfirm(gatewayReference);
                Map<String, PendingConfirm> batch;
                boolean interrupted = false;
                synchronized (lock) {
                    waiting.put(refundId, mine);
                    while (writing && !mine.done) {
                        try {
                            lock.wait();
                        } catch (InterruptedException e) {
                            interrupted = true; // a confirm is not abandoned half-way
                        }
                    }
                    if (interrupted) {
                        Thread.currentThread().interrupt();
                    }
                    if (mine.done) {
                        return mine.result();
                    }
                    writing = true;
                    batch = waiting;
                    waiting = new LinkedHashMap<>();
                }
                Map<String, FencedException> refusals = Map.of();
                Throwable failure = null;
                try {
                    refusals = write(batch);
                } catch (Throwable e) {
                    failure = e;
                } finally {
                    synchronized (lock) {
                        for (Map.Entry<String, PendingConfirm> entry : batch.entrySet()) {
                            entry.getValue().finish(refusals.get(entry.getKey()), failure);
                        }
                        writing = false;
                        lock.notifyAll();
                    }
                }
                return mine.result();
            }

            private Map<String, FencedException> write(Map<String, PendingConfirm> batch) throws SQLException {
                Map<String, String> references = new LinkedHashMap<>();
                batch.forEach((id, pending) -> references.put(id, pending.gatewayReference));
                // Auto-commit: a refused row does not undo the others, whose gateway calls were made
                // (the record saves the next holder a lookup). PostgreSQL commits the whole batch at
                // its one Sync message, so a batch costs one round trip.
                try (Connection connection = dataSource.getConnection()) {
                    connection.setAutoCommit(true);
                    return writes.confirmAll(connection, references, token);
                }
            }
        }

        List<RefundRow> unsettled(String merchant) throws SQLException {
            List<RefundRow> rows = new ArrayList<>();
            try (Connection connection = dataSource.getConnection();
                 PreparedStatement statement = connection.prepareStatement(
                         "SELECT id, merchant, amount, currency, idempotency_key, state FROM refund"
                                 + " WHERE merchant = ? AND state IN ('pending', 'sending') ORDER BY seq")) {
                statement.setString(1, merchant);
                try (ResultSet rs = statement.executeQuery()) {
                    while (rs.next()) {
                        rows.add(new RefundRow(rs.getString(1), rs.getString(2), rs.getBigDecimal(3), rs.getString(4), rs.getString(5),
                                rs.getString(6)));
                    }
                }
            }
            return rows;
        }

        SettlementOutcome outcome(String merchant) {
            Result result;
            if (violation.get() != null) {
                result = Result.FENCE_VIOLATION;
            } else if (error.get() != null) {
                result = Result.FAILED;
            } else if (leaseLost.get()) {
                result = Result.LEASE_LOST;
            } else if (gatewayDown.get() || left() > 0) {
                result = Result.GATEWAY_UNAVAILABLE;
            } else if (failed.get() > 0) {
                result = Result.REJECTED;
            } else {
                result = Result.COMPLETED;
            }
            return new SettlementOutcome(result, merchant, token, sent.get(), recovered.get(), failed.get(), skipped.size(), left(),
                    violation.get(), error.get());
        }

        /** Rows read at the start that this run neither finished nor found finished. */
        int left() {
            return read - sent.get() - failed.get() - skipped.size();
        }
    }

    private static void awaitQuietly(ExecutorService pool) {
        try {
            while (!pool.awaitTermination(1, TimeUnit.MINUTES)) {
                // in-flight refunds finish their gateway call and confirm; they are not abandoned half-way
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void emit(String type, String refundId, long token, String detail) {
        listener.onEvent(new SettlementEvent(type, name, refundId, token, detail, clock.millis()));
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
        private boolean fencing = true;
        private boolean renewal = true;
        private boolean checkBeforeWrite;
        private String name = "worker";
        private SettlementListener listener = event -> { };
        private PhaseHook hook = (phase, id) -> { };
        private Clock clock = Clock.systemUTC();

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

        /** False only to demonstrate the damage: writes carry the token but the database does not check it. */
        public Builder fencing(boolean fencing) {
            this.fencing = fencing;
            return this;
        }

        /** Renew the lease in the background (default true); for comparing mechanisms. */
        public Builder renewal(boolean renewal) {
            this.renewal = renewal;
            return this;
        }

        /** GET the lease before every write and stop when it is gone (default false); for comparing mechanisms. */
        public Builder checkBeforeWrite(boolean checkBeforeWrite) {
            this.checkBeforeWrite = checkBeforeWrite;
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

        /** The clock that stamps events; the system's by default. Leases expire by the store's clock, not this one. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        public SettlementWorker build() {
            return new SettlementWorker(this);
        }
    }
}
