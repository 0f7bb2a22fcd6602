package dev.fenced.fleet;

import dev.fenced.StoreUnavailableException;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.SettlementOutcome;
import dev.fenced.settlement.SettlementWorker;
import io.nats.client.Connection;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullSubscribeOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A long-running settlement worker fed by a JetStream pull consumer: it takes up to {@code jobs}
 * jobs at once, settles each merchant under its own lease and token, and answers JetStream:
 *
 * <ul>
 *   <li>done (every refund answered, some perhaps refused) → ack;</li>
 *   <li>lease held elsewhere → nak with a delay of AckWait: the holder may be a paused worker whose
 *       lease will expire;</li>
 *   <li>gateway unavailable or a store failing → nak with a growing delay; on the
 *       {@code maxDeliver}-th counted delivery, the dead letters instead (deliveries that found
 *       the lease busy or were handed back by a drain are not counted: {@link ExcusedDeliveries});</li>
 *   <li>a database wait ran out (a lock another session kept, a statement's time limit) → nak
 *       with a delay of AckWait, counted towards the dead letters like a failure;</li>
 *   <li>fence violation or lost lease → nothing: another holder owns the merchant and, when it came
 *       through the queue, its delivery of the same job decides; with no live delivery, AckWait
 *       hands the job on;</li>
 *   <li>a drain (SIGTERM) → the run stops claiming, what is in flight is confirmed, and the job is
 *       handed back at once; a job still running when the drain time is over gets no answer at all,
 *       and AckWait hands it on.</li>
 * </ul>
 *
 * Every nak is recorded before it is sent, and the record deleted when the job is delivered again,
 * so that the status tells a job handed back from one a worker holds ({@link JobQueueStatus}).
 *
 * While a job runs, the worker sends an in-progress ack every AckWait / 3, so a slow live job keeps
 * its delivery; a paused or dead process stops heartbeating, JetStream redelivers its job, and the
 * next holder's token fences the old one out. A run whose lease was gone when it ended (it was
 * paused, and JetStream may have handed its job on) leaves its delivery alone unless the work is
 * done. A job that arrives for its {@code 4 × maxDeliver}-th counted delivery (e.g. one that
 * kills its worker every time) is dead-lettered at once. The worker never acks a job it did not
 * finish, so a crash loses nothing.
 */
public final class FleetWorker {
    /** The most jobs one worker settles at once ({@link Builder#jobs}). */
    public static final int MAX_JOBS = 64;
    private final Connection connection;
    private final JobStream stream;
    private final Function<String, SettlementWorker> workers;
    private final int jobs;
    private final boolean heartbeats;
    private final Duration retryDelay;
    private final Duration drainTime;
    private final Consumer<JobEvent> listener;

    private FleetWorker(Builder b) {
        this.connection = Objects.requireNonNull(b.connection, "connection");
        this.stream = Objects.requireNonNull(b.stream, "stream");
        this.workers = Objects.requireNonNull(b.workers, "workers");
        this.jobs = requireValidJobs(b.jobs);
        this.heartbeats = b.heartbeats;
        this.retryDelay = Objects.requireNonNull(b.retryDelay, "retryDelay");
        this.drainTime = Objects.requireNonNull(b.drainTime, "drainTime");
        this.listener = Objects.requireNonNull(b.listener, "listener");
    }

    /** Returns {@code jobs} when it is 1 to {@link #MAX_JOBS}; otherwise IllegalArgumentException "jobs must be 1 to 64, got N". */
    public static int requireValidJobs(int jobs) {
        if (jobs < 1 || jobs > MAX_JOBS) {
            throw new IllegalArgumentException("jobs must be 1 to " + MAX_JOBS + ", got " + jobs);
        }
        return jobs;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * What a run of the worker did, counted by how each delivery ended, and where the time of its jobs went: settling
     * (lease, rows, gateway) or talking to the broker (the fetches that brought jobs, acks, naks, heartbeats, dead letters).
     *
     * @param unfinished the merchants whose jobs were still running when the drain time ran out, in no order; empty after a
     *     clean drain. Their deliveries were neither acked nor handed back: JetStream redelivers them after AckWait
     */
    public record Summary(long acked, long retried, long handedBack, long left, long deadLettered, long settleMillis, long brokerMillis,
                          List<String> unfinished) {
        public Summary {
            unfinished = List.copyOf(unfinished);
        }

        /** A summary with no job left running. */
        public Summary(long acked, long retried, long handedBack, long left, long deadLettered, long settleMillis, long brokerMillis) {
            this(acked, retried, handedBack, left, deadLettered, settleMillis, brokerMillis, List.of());
        }

        /** True when the drain ran out of time with jobs still running: the run did not end its work. */
        public boolean drainTimedOut() {
            return !unfinished.isEmpty();
        }
    }

    /**
     * Takes and settles jobs until {@code stopRequested} says so, then drains: no new job, the jobs
     * in flight stop claiming and end within the drain time, their deliveries answered. A job still
     * running when the drain time is over is given up: its delivery gets no answer (no ack, no nak,
     * no more heartbeats), so JetStream redelivers it after AckWait, and the summary names its
     * merchant ({@link Summary#unfinished}). The stores it uses are still in use when this returns.
     */
    public Summary run(BooleanSupplier stopRequested) {
        Duration ackWait = consumerAckWait();
        JobAnswers answers = new JobAnswers(connection, stream, ackWait, retryDelay, listener);
        ExecutorService pool = Executors.newFixedThreadPool(jobs, daemon("fleet-job"));
        ScheduledExecutorService heart = Executors.newSingleThreadScheduledExecutor(daemon("fleet-heartbeat"));
        Semaphore free = new Semaphore(jobs);
        // Raised first when the loop ends for any reason, so that the jobs in flight drain before
        // the caller closes the stores under them.
        AtomicBoolean stopping = new AtomicBoolean();
        BooleanSupplier stop = () -> stopping.get() || stopRequested.getAsBoolean();
        Map<Object, String> running = new ConcurrentHashMap<>();
        AtomicBoolean gaveUp = new AtomicBoolean();
        List<String> unfinished = List.of();
        try {
            JetStreamSubscription subscription = connection.jetStream().subscribe(null, PullSubscribeOptions.bind(stream.stream(), stream.consumer()));
            while (!stop.getAsBoolean()) {
                if (!free.tryAcquire(200, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                int wanted = 1 + free.drainPermits();
                long fetchStart = System.nanoTime();
                List<Message> delivered = subscription.fetch(wanted, Duration.ofMillis(500));
                if (!delivered.isEmpty()) {
                    answers.brokerNanos.addAndGet(System.nanoTime() - fetchStart);
                }
                free.release(wanted - delivered.size());
                for (Message message : delivered) {
                    pool.execute(() -> {
                        try {
                            handle(message, stop, heart, answers, ackWait, running, gaveUp);
                        } finally {
                            free.release();
                        }
                    });
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.io.IOException | io.nats.client.JetStreamApiException | RuntimeException e) {
            throw new StoreUnavailableException("could not consume " + stream.stream() + "/" + stream.consumer() + ": " + e.getMessage(), e);
        } finally {
            stopping.set(true);
            pool.shutdown();
            boolean drained = false;
            try {
                drained = pool.awaitTermination(drainTime.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (!drained) {
                // Before the heartbeats stop: a job that ends now leaves its delivery alone, so that
                // AckWait, not a late nak or ack from a process on its way out, decides what happens to it.
                gaveUp.set(true);
                unfinished = List.copyOf(running.values());
            }
            heart.shutdownNow();
            flushQuietly();
        }
        Summary counted = answers.summary();
        return new Summary(counted.acked(), counted.retried(), counted.handedBack(), counted.left(), counted.deadLettered(),
                counted.settleMillis(), counted.brokerMillis(), unfinished);
    }

    /** The AckWait the consumer really has: another worker may have set it; heartbeats must beat it. */
    private Duration consumerAckWait() {
        try {
            Duration configured = connection.jetStreamManagement().getConsumerInfo(stream.stream(), stream.consumer())
                    .getConsumerConfiguration().getAckWait();
            return configured == null ? stream.ackWait() : configured;
        } catch (java.io.IOException | io.nats.client.JetStreamApiException e) {
            throw new StoreUnavailableException("could not read the consumer " + stream.consumer() + ": " + e.getMessage(), e);
        }
    }

    private void handle(Message message, BooleanSupplier stopRequested, ScheduledExecutorService heart, JobAnswers answers, Duration ackWait,
                        Map<Object, String> running, AtomicBoolean gaveUp) {
        long sequence = message.metaData().streamSequence();
        long delivery = message.metaData().deliveredCount();
        String merchant = new String(message.getData(), StandardCharsets.UTF_8);
        long takenStart = System.nanoTime();
        answers.taken(sequence);
        answers.brokerNanos.addAndGet(System.nanoTime() - takenStart);
        emit(JobEvent.Type.RECEIVED, merchant, sequence, delivery, "delivery " + delivery);
        if (!Merchants.isValid(merchant)) {
            answers.deadLetter(message, "invalid", sequence, delivery, "not a merchant id");
            return;
        }
        if (stopRequested.getAsBoolean()) {
            // fetched while the drain began: hand it straight back rather than start it
            answers.handBack(message, merchant, sequence, delivery, "draining");
            return;
        }
        if (answers.counted(sequence, delivery) >= 4L * stream.maxDeliver()) {
            answers.deadLetter(message, merchant, sequence, delivery, "delivered " + delivery + " times without an answer");
            return;
        }
        long beat = Math.max(100, ackWait.toMillis() / 3);
        Runnable inProgress = () -> {
            long start = System.nanoTime();
            try {
                message.inProgress();
            } catch (RuntimeException reconnecting) {
                // a throw would cancel every later beat: the next one tries again
            }
            answers.brokerNanos.addAndGet(System.nanoTime() - start);
        };
        ScheduledFuture<?> heartbeat = heartbeats ? heart.scheduleAtFixedRate(inProgress, beat, beat, TimeUnit.MILLISECONDS) : null;
        // Out of the running set only once answered (or not): a job the drain gives up on meanwhile is counted unfinished.
        Object slot = new Object();
        running.put(slot, merchant);
        try {
            SettlementOutcome outcome;
            long settleStart = System.nanoTime();
            try {
                outcome = workers.apply(merchant).settle(merchant, stopRequested);
            } catch (RuntimeException e) {
                outcome = SettlementOutcome.failedToStart(merchant, e.getMessage());
            } finally {
                if (heartbeat != null) {
                    heartbeat.cancel(false);
                }
                answers.settleNanos.addAndGet(System.nanoTime() - settleStart);
            }
            if (gaveUp.get()) {
                emit(JobEvent.Type.LEFT, merchant, sequence, delivery, outcome.result() + " after the drain gave up: left to AckWait");
                return;
            }
            long answerStart = System.nanoTime();
            answers.answer(message, merchant, sequence, delivery, outcome);
            answers.brokerNanos.addAndGet(System.nanoTime() - answerStart);
        } finally {
            running.remove(slot);
        }
    }

    private void emit(JobEvent.Type type, String merchant, long sequence, long delivery, String detail) {
        listener.accept(new JobEvent(type, merchant, sequence, delivery, detail, System.currentTimeMillis()));
    }

    private void flushQuietly() {
        try {
            connection.flush(Duration.ofSeconds(5));
        } catch (java.util.concurrent.TimeoutException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        AtomicLong count = new AtomicLong();
        return runnable -> {
            Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** Configures a {@link FleetWorker}. */
    public static final class Builder {
        private Connection connection;
        private JobStream stream = JobStream.defaults();
        private Function<String, SettlementWorker> workers;
        private int jobs = 1;
        private boolean heartbeats = true;
        private Duration retryDelay = Duration.ofSeconds(1);
        private Duration drainTime = Duration.ofSeconds(30);
        private Consumer<JobEvent> listener = event -> { };

        public Builder connection(Connection connection) {
            this.connection = connection;
            return this;
        }

        public Builder stream(JobStream stream) {
            this.stream = stream;
            return this;
        }

        /** Builds the settlement worker of one job, given its merchant: a new one per job, as it settles one merchant at a time. */
        public Builder workers(Function<String, SettlementWorker> workers) {
            this.workers = workers;
            return this;
        }

        /** Jobs settled at once, each under its own lease; 1 by default. */
        public Builder jobs(int jobs) {
            this.jobs = jobs;
            return this;
        }

        /**
         * In-progress acks while a job runs (default true). Without them a job that outlasts AckWait is redelivered while
         * it runs; the fence still keeps the two holders apart. Off only to show that.
         */
        public Builder heartbeats(boolean heartbeats) {
            this.heartbeats = heartbeats;
            return this;
        }

        /** The first retry's delay after a gateway or store failure, doubled per delivery; 1 s by default. */
        public Builder retryDelay(Duration retryDelay) {
            this.retryDelay = retryDelay;
            return this;
        }

        /** How long a drain waits for the jobs in flight; 30 s by default. */
        public Builder drainTime(Duration drainTime) {
            this.drainTime = drainTime;
            return this;
        }

        public Builder listener(Consumer<JobEvent> listener) {
            this.listener = listener;
            return this;
        }

        public FleetWorker build() {
            return new FleetWorker(this);
        }
    }
}
