package dev.fenced.fleet;

import dev.fenced.StoreUnavailableException;
import dev.fenced.settlement.Merchants;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.PublishAck;
import io.nats.client.api.StreamState;
import io.nats.client.PublishOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Publishes settlement jobs (one per merchant batch) and reads the job stream's state. A job's
 * message id is {@code settle:<merchant>} unless a batch id is given, so JetStream's
 * de-duplication makes enqueueing the same job twice within the window one job, as long as the
 * first is still in the stream; once it is done or dead-lettered, a new enqueue is a new job.
 */
public final class SettlementJobs {
    private final Connection connection;
    private final JobStream stream;

    private SettlementJobs(Connection connection, JobStream stream) {
        this.connection = connection;
        this.stream = stream;
    }

    /**
     * Ensures the streams and the consumer exist with the fleet's settings (see {@link JobStream}),
     * leaving an existing consumer's AckWait to the workers: what a producer uses.
     */
    public static SettlementJobs on(Connection connection, JobStream stream) {
        return open(connection, stream, false);
    }

    /** As {@link #on}, and brings the consumer to the stream's settings (AckWait): what a worker uses at start. */
    public static SettlementJobs configure(Connection connection, JobStream stream) {
        return open(connection, stream, true);
    }

    private static SettlementJobs open(Connection connection, JobStream stream, boolean configureConsumer) {
        try {
            stream.ensure(connection, configureConsumer);
        } catch (IOException | JetStreamApiException e) {
            throw new StoreUnavailableException("could not create or check the JetStream stream " + stream.stream() + ": " + e.getMessage(), e);
        }
        return new SettlementJobs(connection, stream);
    }

    /** What an enqueue did: the job's stream sequence, and whether it was already there. */
    public record Enqueued(String merchant, long sequence, boolean duplicate) {
    }

    /** Returns a batch id (null for none) when it can be part of a message id: 1 to 64 letters, digits, dots, underscores or hyphens. */
    public static String requireValidBatchId(String batchId) {
        if (batchId != null && !batchId.matches("[A-Za-z0-9_.-]{1,64}")) {
            throw new IllegalArgumentException("batch id '" + batchId + "' must be 1 to 64 letters, digits, dots, underscores or hyphens");
        }
        return batchId;
    }

    /** Enqueues the settlement of {@code merchant}'s unsettled refunds. */
    public Enqueued enqueue(String merchant) {
        return enqueue(merchant, null);
    }

    /** As {@link #enqueue(String)}; a {@code batchId} makes a job distinct from other batches of the merchant. */
    public Enqueued enqueue(String merchant, String batchId) {
        Merchants.requireValid(merchant);
        requireValidBatchId(batchId);
        String messageId = "settle:" + merchant + (batchId == null ? "" : ":" + batchId);
        try {
            PublishAck ack = publish(merchant, messageId);
            while (ack.isDuplicate() && !stillInStream(ack.getSeqno())) {
                // JetStream remembers an id for the whole window, also after the job was done or
                // dead-lettered: a job enqueued again then must not be swallowed as a duplicate.
                // The id it moves to may name a job that is gone too (enqueued and dead-lettered
                // twice within the window): each step names a later job, so the chain ends.
                ack = publish(merchant, messageId + ":after:" + ack.getSeqno());
            }
            return new Enqueued(merchant, ack.getSeqno(), ack.isDuplicate());
        } catch (IOException | JetStreamApiException e) {
            throw new StoreUnavailableException("could not enqueue the job of " + merchant + ": " + e.getMessage(), e);
        }
    }

    /**
     * What a requeue did: a job for each dead letter sent back (a duplicate when the merchant's job
     * was already waiting), and how many dead letters it left because they name no merchant.
     */
    public record Requeued(List<Enqueued> jobs, long leftNotMerchants) {
    }

    /**
     * Sends every dead letter back to the job stream as its merchant's job and removes it from the
     * dead letters, oldest first; dead letters that arrive meanwhile are left for the next requeue.
     * A job is published before its dead letter is removed, so a requeue cut short loses nothing:
     * the next one publishes the rest, and de-duplication makes a job published twice one job while
     * it waits. The new job has a message id JetStream has not seen in its window ({@link #enqueue}),
     * and its deliveries are counted afresh.
     */
    public Requeued requeueDeadLetters() {
        List<Enqueued> jobs = new ArrayList<>();
        long notMerchants = 0;
        try {
            JetStreamManagement management = connection.jetStreamManagement();
            StreamState dead = management.getStreamInfo(stream.deadStream()).getStreamState();
            long next = dead.getFirstSequence();
            while (dead.getMsgCount() > 0 && next <= dead.getLastSequence()) {
                MessageInfo letter = nextMessage(management, stream.deadStream(), next, stream.deadSubject("*"));
                if (letter == null || letter.getSeq() > dead.getLastSequence()) {
                    break;
                }
                next = letter.getSeq() + 1;
                String merchant = new String(letter.getData(), StandardCharsets.UTF_8);
                if (!Merchants.isValid(merchant)) {
                    notMerchants++; // it would only be dead-lettered again
                    continue;
                }
                jobs.add(enqueue(merchant));
                management.deleteMessage(stream.deadStream(), letter.getSeq());
            }
        } catch (IOException | JetStreamApiException e) {
            throw new StoreUnavailableException("could not requeue the dead letters of " + stream.stream() + ": " + e.getMessage(), e);
        }
        return new Requeued(List.copyOf(jobs), notMerchants);
    }

    /** The first message on {@code subjects} at or after {@code sequence}, or null when there is none. */
    private static MessageInfo nextMessage(JetStreamManagement management, String streamName, long sequence, String subjects)
            throws IOException, JetStreamApiException {
        try {
            return management.getNextMessage(streamName, sequence, subjects);
        } catch (JetStreamApiException e) {
            if (isNoMessage(e)) {
                return null;
            }
            throw e;
        }
    }

    private static boolean isNoMessage(JetStreamApiException e) {
        return e.getApiErrorCode() == 10037 || e.getErrorCode() == 404;
    }

    private PublishAck publish(String merchant, String messageId) throws IOException, JetStreamApiException {
        return connection.jetStream().publish(stream.jobSubject(merchant), merchant.getBytes(StandardCharsets.UTF_8),
                PublishOptions.builder().messageId(messageId).expectedStream(stream.stream()).build());
    }

    private boolean stillInStream(long sequence) throws IOException, JetStreamApiException {
        try {
            connection.jetStreamManagement().getMessage(stream.stream(), sequence);
            return true;
        } catch (JetStreamApiException e) {
            if (isNoMessage(e)) {
                return false;
            }
            throw e;
        }
    }

    public JobQueueStatus status() {
        return statusOf(connection, stream).orElseThrow();
    }

    /**
     * The job stream's state, read without creating or changing anything; empty when the stream
     * does not exist. Handed-back jobs are told from held ones as {@link JobQueueStatus} says.
     */
    public static Optional<JobQueueStatus> statusOf(Connection connection, JobStream stream) {
        try {
            JetStreamManagement management = connection.jetStreamManagement();
            List<String> streams = management.getStreamNames();
            if (!streams.contains(stream.stream())) {
                return Optional.empty();
            }
            ConsumerInfo consumer = management.getConsumerInfo(stream.stream(), stream.consumer());
            long dead = streams.contains(stream.deadStream()) ? management.getStreamInfo(stream.deadStream()).getStreamState().getMsgCount() : 0;
            long ackPending = consumer.getNumAckPending();
            long ackFloor = consumer.getAckFloor() == null ? 0 : consumer.getAckFloor().getStreamSequence();
            long recorded = streams.contains("KV_" + stream.handedBackBucket()) ? HandedBackJobs.count(connection, stream, ackFloor) : 0;
            // A record read just before its job was acked may outnumber ack-pending for a moment.
            long handedBack = Math.min(recorded, ackPending);
            return Optional.of(new JobQueueStatus(consumer.getNumPending(), handedBack, ackPending - handedBack, consumer.getRedelivered(), dead));
        } catch (IOException | JetStreamApiException e) {
            throw new StoreUnavailableException("could not read the job stream " + stream.stream() + ": " + e.getMessage(), e);
        }
    }
}
