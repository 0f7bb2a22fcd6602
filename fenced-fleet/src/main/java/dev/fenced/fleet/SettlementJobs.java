package dev.fenced.fleet;

import dev.fenced.StoreUnavailableException;
import dev.fenced.settlement.Merchants;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.PublishAck;
import io.nats.client.PublishOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * Publishes settlement jobs (one per merchant batch) and reads the job stream's state. A job's
 * message id is {@code settle:<merchant>} unless a batch id is given, so JetStream's
 * de-duplication makes enqueueing the same job twice within the window one job.
 */
public final class SettlementJobs {
    private final Connection connection;
    private final JobStream stream;

    private SettlementJobs(Connection connection, JobStream stream) {
        this.connection = connection;
        this.stream = stream;
    }

    /** Ensures the streams and the consumer exist with the fleet's settings (see {@link JobStream}). */
    public static SettlementJobs on(Connection connection, JobStream stream) {
        try {
            stream.ensure(connection.jetStreamManagement());
        } catch (IOException | JetStreamApiException e) {
            throw new StoreUnavailableException("could not create or check the JetStream stream " + stream.stream() + ": " + e.getMessage(), e);
        }
        return new SettlementJobs(connection, stream);
    }

    /** What an enqueue did: the job's stream sequence, and whether it was already there. */
    public record Enqueued(String merchant, long sequence, boolean duplicate) {
    }

    /** Enqueues the settlement of {@code merchant}'s unsettled refunds. */
    public Enqueued enqueue(String merchant) {
        return enqueue(merchant, null);
    }

    /** As {@link #enqueue(String)}; a {@code batchId} makes a job distinct from other batches of the merchant. */
    public Enqueued enqueue(String merchant, String batchId) {
        Merchants.requireValid(merchant);
        if (batchId != null && !batchId.matches("[A-Za-z0-9_.-]{1,64}")) {
            throw new IllegalArgumentException("batch id '" + batchId + "' must be 1 to 64 letters, digits, dots, underscores or hyphens");
        }
        String messageId = "settle:" + merchant + (batchId == null ? "" : ":" + batchId);
        try {
            PublishAck ack = connection.jetStream().publish(stream.jobSubject(merchant), merchant.getBytes(StandardCharsets.UTF_8),
                    PublishOptions.builder().messageId(messageId).expectedStream(stream.stream()).build());
            return new Enqueued(merchant, ack.getSeqno(), ack.isDuplicate());
        } catch (IOException | JetStreamApiException e) {
            throw new StoreUnavailableException("could not enqueue the job of " + merchant + ": " + e.getMessage(), e);
        }
    }

    public JobQueueStatus status() {
        return statusOf(connection, stream).orElseThrow();
    }

    /** The job stream's state, read without creating or changing anything; empty when the stream does not exist. */
    public static Optional<JobQueueStatus> statusOf(Connection connection, JobStream stream) {
        try {
            JetStreamManagement management = connection.jetStreamManagement();
            List<String> streams = management.getStreamNames();
            if (!streams.contains(stream.stream())) {
                return Optional.empty();
            }
            ConsumerInfo consumer = management.getConsumerInfo(stream.stream(), stream.consumer());
            long dead = streams.contains(stream.deadStream()) ? management.getStreamInfo(stream.deadStream()).getStreamState().getMsgCount() : 0;
            return Optional.of(new JobQueueStatus(consumer.getNumPending(), consumer.getNumAckPending(), consumer.getRedelivered(), dead));
        } catch (IOException | JetStreamApiException e) {
            throw new StoreUnavailableException("could not read the job stream " + stream.stream() + ": " + e.getMessage(), e);
        }
    }
}
