package dev.fenced.fleet;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import java.io.IOException;
import java.util.List;

/**
 * The jobs a worker handed back (a drain's nak, a retry's nak with a delay) that no worker has
 * taken since. JetStream cannot tell them apart from the jobs a worker holds: a nak'ed message
 * stays among the consumer's ack-pending ones until it is delivered again, with or without a
 * delay, so its consumer info counts a job handed back by a drained worker as in progress for as
 * long as no worker runs. So the worker writes the job's stream sequence into the bucket
 * {@link JobStream#handedBackBucket()} before its nak, and the worker that receives the job again
 * deletes it; the status counts the sequences above the consumer's ack floor (a job below it is done).
 *
 * <p>Best effort, and wrong only towards "handed back": a record whose write fails is missing (the
 * job shows in progress until it is redelivered), one whose delete fails stays until the job is
 * done. A worker that died holding a job leaves no record: JetStream hands the job on after AckWait,
 * and until then it counts as in progress.
 */
final class HandedBackJobs {
    private final KeyValue bucket;

    private HandedBackJobs(KeyValue bucket) {
        this.bucket = bucket;
    }

    static HandedBackJobs of(Connection connection, JobStream stream) {
        try {
            return new HandedBackJobs(connection.keyValue(stream.handedBackBucket()));
        } catch (IOException | RuntimeException e) {
            return new HandedBackJobs(null);
        }
    }

    /** Before the nak: the job at {@code sequence} waits for its next delivery. */
    void handedBack(long sequence, long delivery) {
        if (bucket == null) {
            return;
        }
        try {
            bucket.put(Long.toString(sequence), Long.toString(delivery));
        } catch (IOException | JetStreamApiException | RuntimeException unreachable) {
            // the job is handed back all the same; only the status miscounts it
        }
    }

    /**
     * A worker has taken the job at {@code sequence}, perhaps again: its record, if it has one, is
     * deleted. Asked on every delivery, not only those numbered above 1: a nats-server before 2.10.14
     * may number a redelivery 1 (nats-server#5305). A read, and a write only when there is a record.
     */
    void taken(long sequence) {
        if (bucket == null) {
            return;
        }
        try {
            String key = Long.toString(sequence);
            if (bucket.get(key) != null) {
                bucket.delete(key);
            }
        } catch (IOException | JetStreamApiException | RuntimeException unreachable) {
            // the status counts it as handed back until the job is done
        }
    }

    /** How many jobs above {@code ackFloor} (the stream sequence at and below which every job is done) are handed back. Reads only. */
    static long count(Connection connection, JobStream stream, long ackFloor) throws IOException, JetStreamApiException {
        List<String> keys;
        try {
            keys = connection.keyValue(stream.handedBackBucket()).keys();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted reading " + stream.handedBackBucket(), e);
        }
        return keys.stream().filter(key -> sequenceOf(key) > ackFloor).count();
    }

    private static long sequenceOf(String key) {
        try {
            return Long.parseLong(key);
        } catch (NumberFormatException notOurs) {
            return 0;
        }
    }
}
