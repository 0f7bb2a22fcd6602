package dev.fenced.fleet;

import dev.fenced.internal.Durations;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.KeyValueManagement;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamInfo;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Where settlement jobs live on JetStream, and the settings the fleet relies on. Immutable.
 *
 * <ul>
 *   <li>Stream {@code FENCED_SETTLE} (or another name, whose subjects are then {@code fenced.<name>.…}) on {@code fenced.settle.job.<merchant>}, <b>work-queue</b>
 *       retention (a job leaves the stream when a worker acks it), file storage, a de-duplication
 *       window of 2 minutes (two enqueues of one job within it are one job).</li>
 *   <li>Durable pull consumer {@code settlement-workers}, explicit acks, <b>AckWait</b> 30 s (the
 *       job's visibility timeout: a worker that stops heartbeating for that long loses the job to
 *       another; the workers set it, producers never change it), no broker-side delivery limit:
 *       the worker itself sends a job that fails on its {@code maxDeliver}-th counted delivery (5)
 *       to the dead letters, so that a job is never parked silently by the broker. A delivery
 *       that found the lease busy or was handed back by a drain does not count: a job waiting
 *       behind a long-running holder has not failed.</li>
 *   <li>Key-value bucket {@code FENCED_SETTLE_EXCUSED} (file storage, entries kept as long as
 *       dead letters): those excused deliveries per job, shared by the fleet's workers.</li>
 *   <li>Key-value bucket {@code FENCED_SETTLE_HANDED_BACK} (the same settings): the jobs a worker
 *       handed back that no worker has taken since, for the status ({@link JobQueueStatus}).</li>
 *   <li>Stream {@code FENCED_SETTLE_DEAD} on {@code fenced.settle.dead.<merchant>}, limits
 *       retention, file storage, kept 14 days: the dead letters, with the reason in a header.</li>
 * </ul>
 *
 * {@link #ensure(Connection, boolean)} creates them or brings them to these settings at start; a
 * stream of the same name with another retention is refused rather than changed.
 */
public final class JobStream {
    private static final String DEFAULT_STREAM = "FENCED_SETTLE";
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final Pattern SUBJECT = Pattern.compile("[a-z0-9_-]+(\\.[a-z0-9_-]+)*");

    private final String stream;
    private final String subjects;
    private final String deadStream;
    private final String deadSubjects;
    private final String consumer;
    private final Duration ackWait;
    private final int maxDeliver;
    private final Duration duplicateWindow;
    private final Duration deadLetterAge;

    private JobStream(Builder b) {
        this.stream = name("stream", b.stream);
        this.deadStream = name("dead-letter stream", b.stream + "_DEAD");
        this.consumer = name("consumer", b.consumer);
        // Streams may not share subjects: another stream name gets subjects of its own unless told otherwise.
        String prefix = b.subjectPrefix != null ? b.subjectPrefix
                : b.stream.equals(DEFAULT_STREAM) ? "fenced.settle" : "fenced." + b.stream.toLowerCase(Locale.ROOT);
        if (!SUBJECT.matcher(prefix).matches()) {
            throw new IllegalArgumentException("subject prefix '" + prefix + "' must be dot-separated lower-case tokens");
        }
        this.subjects = prefix + ".job";
        this.deadSubjects = prefix + ".dead";
        this.ackWait = positive("ackWait", b.ackWait, Duration.ofMillis(500), Duration.ofHours(1));
        if (b.maxDeliver < 1 || b.maxDeliver > 1000) {
            throw new IllegalArgumentException("maxDeliver must be 1 to 1000, got " + b.maxDeliver);
        }
        this.maxDeliver = b.maxDeliver;
        this.duplicateWindow = positive("duplicateWindow", b.duplicateWindow, Duration.ofSeconds(1), Duration.ofDays(1));
        this.deadLetterAge = positive("deadLetterAge", b.deadLetterAge, Duration.ofMinutes(1), Duration.ofDays(365));
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The defaults above. */
    public static JobStream defaults() {
        return builder().build();
    }

    public String stream() {
        return stream;
    }

    public String deadStream() {
        return deadStream;
    }

    public String consumer() {
        return consumer;
    }

    public Duration ackWait() {
        return ackWait;
    }

    public int maxDeliver() {
        return maxDeliver;
    }

    /** The key-value bucket of the deliveries that do not count towards {@link #maxDeliver()}: {@code <stream>_EXCUSED}. */
    public String excusedBucket() {
        return stream + "_EXCUSED";
    }

    /** The key-value bucket of the jobs handed back and not yet taken again ({@link HandedBackJobs}): {@code <stream>_HANDED_BACK}. */
    public String handedBackBucket() {
        return stream + "_HANDED_BACK";
    }

    /** The subject of a merchant's settlement job. */
    public String jobSubject(String merchant) {
        return subjects + "." + merchant;
    }

    /** The subject of a merchant's dead letters. */
    public String deadSubject(String merchant) {
        return deadSubjects + "." + merchant;
    }

    /** The merchant of a job or dead-letter subject: its last token. */
    static String merchantOfSubject(String subject) {
        return subject.substring(subject.lastIndexOf('.') + 1);
    }

    /**
     * Creates the streams and the consumer, or brings existing ones to these settings. With
     * {@code configureConsumer} false an existing consumer is left as it is: a producer (enqueue,
     * seed) never changes the AckWait the workers run with.
     */
    public void ensure(Connection connection, boolean configureConsumer) throws IOException, JetStreamApiException {
        JetStreamManagement management = connection.jetStreamManagement();
        StreamConfiguration jobs = StreamConfiguration.builder().name(stream).subjects(subjects + ".*")
                .retentionPolicy(RetentionPolicy.WorkQueue).storageType(StorageType.File).duplicateWindow(duplicateWindow).build();
        StreamConfiguration dead = StreamConfiguration.builder().name(deadStream).subjects(deadSubjects + ".*")
                .retentionPolicy(RetentionPolicy.Limits).storageType(StorageType.File).maxAge(deadLetterAge).build();
        ensureStream(management, jobs);
        ensureStream(management, dead);
        ensureBuckets(connection.keyValueManagement());
        if (!configureConsumer && consumerExists(management)) {
            return;
        }
        management.addOrUpdateConsumer(stream, ConsumerConfiguration.builder().durable(consumer).filterSubject(subjects + ".*")
                .ackPolicy(AckPolicy.Explicit).ackWait(ackWait).maxDeliver(-1).maxAckPending(10_000)
                .deliverPolicy(DeliverPolicy.All).build());
    }

    /**
     * Deletes the streams and the bucket, with every job and dead letter in them: the end of a test,
     * a benchmark or a chaos run on a shared server. What is already gone is skipped.
     */
    public void delete(Connection connection) throws IOException, JetStreamApiException {
        JetStreamManagement management = connection.jetStreamManagement();
        List<String> names = management.getStreamNames();
        for (String name : List.of(stream, deadStream, "KV_" + excusedBucket(), "KV_" + handedBackBucket())) {
            if (names.contains(name)) {
                management.deleteStream(name);
            }
        }
    }

    private void ensureBuckets(KeyValueManagement buckets) throws IOException, JetStreamApiException {
        List<String> existing = buckets.getBucketNames();
        for (String name : List.of(excusedBucket(), handedBackBucket())) {
            if (!existing.contains(name)) {
                buckets.create(KeyValueConfiguration.builder().name(name).storageType(StorageType.File)
                        .maxHistoryPerKey(1).ttl(deadLetterAge).build());
            }
        }
    }

    private boolean consumerExists(JetStreamManagement management) throws IOException, JetStreamApiException {
        return management.getConsumerNames(stream).contains(consumer);
    }

    private static void ensureStream(JetStreamManagement management, StreamConfiguration wanted) throws IOException, JetStreamApiException {
        if (!management.getStreamNames().contains(wanted.getName())) {
            management.addStream(wanted);
            return;
        }
        StreamInfo existing = management.getStreamInfo(wanted.getName());
        if (existing.getConfiguration().getRetentionPolicy() != wanted.getRetentionPolicy()) {
            throw new IllegalStateException("stream " + wanted.getName() + " exists with " + existing.getConfiguration().getRetentionPolicy()
                    + " retention; the fleet needs " + wanted.getRetentionPolicy() + ": delete it or choose another stream name");
        }
        management.updateStream(wanted);
    }

    private static String name(String what, String value) {
        if (value == null || !NAME.matcher(value).matches()) {
            throw new IllegalArgumentException(what + " name '" + value + "' must be 1 to 64 letters, digits, underscores or hyphens");
        }
        return value;
    }

    private static Duration positive(String what, Duration value, Duration min, Duration max) {
        Objects.requireNonNull(value, what);
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(what + " must be " + Durations.human(min) + " to " + Durations.human(max) + ", got " + Durations.human(value));
        }
        return value;
    }

    /** Configures a {@link JobStream}; every setting has the default documented on the class. */
    public static final class Builder {
        private String stream = DEFAULT_STREAM;
        private String subjectPrefix;
        private String consumer = "settlement-workers";
        private Duration ackWait = Duration.ofSeconds(30);
        private int maxDeliver = 5;
        private Duration duplicateWindow = Duration.ofMinutes(2);
        private Duration deadLetterAge = Duration.ofDays(14);

        /** The job stream's name; the dead letters' stream is this name with {@code _DEAD}. */
        public Builder stream(String stream) {
            this.stream = stream;
            return this;
        }

        /**
         * Jobs go to {@code <prefix>.job.<merchant>}, dead letters to {@code <prefix>.dead.<merchant>};
         * {@code fenced.settle} for the default stream, {@code fenced.<stream in lower case>} for another.
         */
        public Builder subjectPrefix(String subjectPrefix) {
            this.subjectPrefix = subjectPrefix;
            return this;
        }

        public Builder consumer(String consumer) {
            this.consumer = consumer;
            return this;
        }

        public Builder ackWait(Duration ackWait) {
            this.ackWait = ackWait;
            return this;
        }

        public Builder maxDeliver(int maxDeliver) {
            this.maxDeliver = maxDeliver;
            return this;
        }

        public Builder duplicateWindow(Duration duplicateWindow) {
            this.duplicateWindow = duplicateWindow;
            return this;
        }

        public Builder deadLetterAge(Duration deadLetterAge) {
            this.deadLetterAge = deadLetterAge;
            return this;
        }

        public JobStream build() {
            return new JobStream(this);
        }
    }
}
