package dev.fenced.fleet;

import dev.fenced.settlement.SettlementOutcome;
import io.nats.client.Connection;
import io.nats.client.Message;
import io.nats.client.PublishOptions;
import io.nats.client.impl.Headers;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * How a {@link FleetWorker} answers JetStream for each delivery (see its class comment for the
 * rules), and the counts and times of those answers.
 */
final class JobAnswers {
    /** The header of a dead letter that says why. */
    static final String REASON_HEADER = "Fenced-Reason";

    private final Connection connection;
    private final JobStream stream;
    private final Duration ackWait;
    private final Duration retryDelay;
    private final Consumer<JobEvent> listener;
    private final ExcusedDeliveries excused;
    private final HandedBackJobs handedBackJobs;

    final AtomicLong acked = new AtomicLong();
    final AtomicLong retried = new AtomicLong();
    final AtomicLong handedBack = new AtomicLong();
    final AtomicLong left = new AtomicLong();
    final AtomicLong deadLettered = new AtomicLong();
    final AtomicLong settleNanos = new AtomicLong();
    final AtomicLong brokerNanos = new AtomicLong();

    FleetWorker.Summary summary() {
        return new FleetWorker.Summary(acked.get(), retried.get(), handedBack.get(), left.get(), deadLettered.get(),
                TimeUnit.NANOSECONDS.toMillis(settleNanos.get()), TimeUnit.NANOSECONDS.toMillis(brokerNanos.get()));
    }

    JobAnswers(Connection connection, JobStream stream, Duration ackWait, Duration retryDelay, Consumer<JobEvent> listener) {
        this.connection = connection;
        this.stream = stream;
        this.ackWait = ackWait;
        this.retryDelay = retryDelay;
        this.listener = listener;
        this.excused = ExcusedDeliveries.of(connection, stream);
        this.handedBackJobs = HandedBackJobs.of(connection, stream);
    }

    /** A delivery after the first: the job may have been handed back, and is held again. */
    void taken(long sequence) {
        handedBackJobs.taken(sequence);
    }

    /** The deliveries of a job that count towards its limit: those that tried it (see {@link ExcusedDeliveries}). */
    long counted(long sequence, long delivery) {
        return excused.counted(sequence, delivery);
    }

    void answer(Message message, String merchant, long sequence, long delivery, SettlementOutcome outcome) {
        String result = outcome.result().name();
        boolean done = outcome.result() == SettlementOutcome.Result.COMPLETED || outcome.result() == SettlementOutcome.Result.REJECTED;
        if (outcome.stale() && !done) {
            // A nak or a dead letter from a stale delivery would land on the live holder's redelivery.
            left.incrementAndGet();
            emit(JobEvent.Type.LEFT, merchant, sequence, delivery, result + " after the lease was gone");
            return;
        }
        switch (outcome.result()) {
            case COMPLETED, REJECTED -> {
                message.ack();
                excused.forget(sequence);
                acked.incrementAndGet();
                emit(JobEvent.Type.ACKED, merchant, sequence, delivery, result);
            }
            case LEASE_BUSY -> {
                excused.excuse(sequence);
                retry(message, merchant, sequence, delivery, ackWait, result);
            }
            case GATEWAY_UNAVAILABLE, FAILED -> {
                long counted = counted(sequence, delivery);
                if (counted >= stream.maxDeliver()) {
                    deadLetter(message, merchant, sequence, delivery, result + (outcome.error() == null ? "" : ": " + outcome.error()));
                } else {
                    long factor = 1L << Math.min(counted - 1, 6);
                    retry(message, merchant, sequence, delivery, retryDelay.multipliedBy(factor), result);
                }
            }
            // Counted, unlike a busy lease: a lease ends by itself within its TTL, a lock another
            // session keeps (a holder stalled inside its transaction) only when that session does.
            // Again after AckWait, as long as a stalled holder's delivery takes to move on; a job
            // that meets the wait on every delivery reaches the dead letters with the wait named.
            case DATABASE_WAIT -> {
                String why = result + ": " + outcome.error();
                if (counted(sequence, delivery) >= stream.maxDeliver()) {
                    deadLetter(message, merchant, sequence, delivery, why);
                } else {
                    retry(message, merchant, sequence, delivery, ackWait, why);
                }
            }
            // No delivery will find rows that are not there: a mistyped merchant is a dead letter at once, never acked as done.
            case NO_REFUNDS -> deadLetter(message, merchant, sequence, delivery, "no refunds for merchant " + merchant);
            case STOPPED -> handBack(message, merchant, sequence, delivery, result);
            case FENCE_VIOLATION, LEASE_LOST -> {
                left.incrementAndGet();
                emit(JobEvent.Type.LEFT, merchant, sequence, delivery, result);
            }
        }
    }

    void handBack(Message message, String merchant, long sequence, long delivery, String why) {
        excused.excuse(sequence);
        handedBackJobs.handedBack(sequence, delivery); // before the nak: a worker that takes the job at once then deletes it
        message.nak();
        handedBack.incrementAndGet();
        emit(JobEvent.Type.HANDED_BACK, merchant, sequence, delivery, why);
    }

    private void retry(Message message, String merchant, long sequence, long delivery, Duration delay, String why) {
        handedBackJobs.handedBack(sequence, delivery);
        message.nakWithDelay(delay);
        retried.incrementAndGet();
        emit(JobEvent.Type.RETRY, merchant, sequence, delivery, why + ", again in " + delay.toMillis() + " ms");
    }

    /** Publishes the job to the dead letters, then terminates it; if the publish fails, the job is retried instead, never lost. */
    void deadLetter(Message message, String merchant, long sequence, long delivery, String reason) {
        Headers headers = new Headers().add(REASON_HEADER, reason).add("Fenced-Deliveries", Long.toString(delivery))
                .add("Fenced-Job-Sequence", Long.toString(sequence));
        try {
            // One dead letter per job even when a publish is retried or the worker dies before the term.
            connection.jetStream().publish(stream.deadSubject(merchant), headers, message.getData(),
                    PublishOptions.builder().messageId("dead:" + stream.stream() + ":" + sequence).expectedStream(stream.deadStream()).build());
        } catch (java.io.IOException | io.nats.client.JetStreamApiException | RuntimeException e) {
            retry(message, merchant, sequence, delivery, ackWait, "the dead letters are unreachable: " + e.getMessage());
            return;
        }
        message.term();
        excused.forget(sequence);
        deadLettered.incrementAndGet();
        emit(JobEvent.Type.DEAD_LETTERED, merchant, sequence, delivery, reason);
    }

    private void emit(JobEvent.Type type, String merchant, long sequence, long delivery, String detail) {
        listener.accept(new JobEvent(type, merchant, sequence, delivery, detail, System.currentTimeMillis()));
    }
}
