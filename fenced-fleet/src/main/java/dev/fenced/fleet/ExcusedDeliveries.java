package dev.fenced.fleet;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * How many deliveries of each job ended without trying it: the lease was busy (another holder
 * settles the merchant), or a drain handed it back. JetStream counts every delivery, and a job
 * waiting behind a long-running holder would otherwise reach the dead letters without ever having
 * failed. Kept in the stream's key-value bucket ({@link JobStream#excusedBucket()}), keyed by the
 * job's stream sequence, so that every worker of the fleet reads the same count.
 *
 * <p>Best effort by design: when the bucket cannot be read or written, a job's deliveries count as
 * JetStream counts them, so an outage of the bucket only makes dead-lettering earlier, never later,
 * and never loses a job.
 */
final class ExcusedDeliveries {
    private static final int ATTEMPTS = 5;

    private final KeyValue bucket;

    private ExcusedDeliveries(KeyValue bucket) {
        this.bucket = bucket;
    }

    static ExcusedDeliveries of(Connection connection, JobStream stream) {
        try {
            return new ExcusedDeliveries(connection.keyValue(stream.excusedBucket()));
        } catch (IOException | RuntimeException e) {
            return new ExcusedDeliveries(null);
        }
    }

    /** The deliveries of the job at {@code sequence} that count towards its limit: all but the excused ones. */
    long counted(long sequence, long delivery) {
        return Math.max(1, delivery - excused(sequence));
    }

    long excused(long sequence) {
        KeyValueEntry entry = read(sequence);
        return entry == null ? 0 : parse(entry);
    }

    /** One more delivery of the job at {@code sequence} is excused. */
    void excuse(long sequence) {
        if (bucket == null) {
            return;
        }
        String key = Long.toString(sequence);
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            try {
                KeyValueEntry entry = bucket.get(key);
                if (entry == null) {
                    bucket.create(key, bytes(1));
                } else {
                    // compare-and-set: a stale holder of an earlier delivery may write at the same moment
                    bucket.update(key, bytes(parse(entry) + 1), entry.getRevision());
                }
                return;
            } catch (JetStreamApiException raced) {
                // another writer got there first: read again
            } catch (IOException | RuntimeException unreachable) {
                return;
            }
        }
    }

    /** The job is gone from the stream (acked or dead-lettered): its count is no longer needed. */
    void forget(long sequence) {
        if (bucket == null) {
            return;
        }
        try {
            bucket.purge(Long.toString(sequence));
        } catch (IOException | JetStreamApiException | RuntimeException ignored) {
            // the bucket's age limit removes it later
        }
    }

    private KeyValueEntry read(long sequence) {
        if (bucket == null) {
            return null;
        }
        try {
            return bucket.get(Long.toString(sequence));
        } catch (IOException | JetStreamApiException | RuntimeException unreachable) {
            return null;
        }
    }

    private static long parse(KeyValueEntry entry) {
        try {
            return Long.parseLong(new String(entry.getValue(), StandardCharsets.US_ASCII));
        } catch (RuntimeException notACount) {
            return 0;
        }
    }

    private static byte[] bytes(long count) {
        return Long.toString(count).getBytes(StandardCharsets.US_ASCII);
    }
}
