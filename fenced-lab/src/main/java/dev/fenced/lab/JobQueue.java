package dev.fenced.lab;

import dev.fenced.StoreUnavailableException;
import dev.fenced.cli.EventLine;
import dev.fenced.fleet.JobEvent;
import dev.fenced.fleet.JobQueueStatus;
import dev.fenced.fleet.JobStream;
import dev.fenced.fleet.SettlementJobs;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.StreamInfoOptions;
import java.io.IOException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * A chaos run's jobs on JetStream: a work-queue stream of the run's own (a unique name, deleted at
 * the end) with one job per merchant, taken by the fleet's workers. The harness only publishes and
 * reads the stream's state; every delivery and redelivery is JetStream's. At the end it tells, per
 * merchant, whether its job was acked, dead-lettered, is still queued or in progress, or was lost
 * (gone from the stream with neither).
 */
final class JobQueue implements AutoCloseable {
    /**
     * Counted deliveries of a failing job before the worker dead-letters it. A chaos run redelivers
     * jobs by design (pauses, kills, lost leases, gateway outages; busy leases are not counted); far
     * above what its faults cause, so that a dead letter in a run is a finding, not the schedule's doing.
     */
    static final int MAX_DELIVER = 25;

    private final Connection connection;
    private final JobStream stream;
    private final SettlementJobs jobs;
    /** Jobs published and taken by the stream (not duplicates of one still there), by merchant. */
    private final Map<String, Integer> published = new HashMap<>();

    private JobQueue(Connection connection, JobStream stream, SettlementJobs jobs) {
        this.connection = connection;
        this.stream = stream;
        this.jobs = jobs;
    }

    /** A stream name no other run or fleet uses: {@code CHAOS_} and 10 random hex digits. */
    static String uniqueName() {
        return "CHAOS_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10).toUpperCase(Locale.ROOT);
    }

    /** Creates the stream, its dead letters and its consumer with the settings the workers are given. */
    static JobQueue create(Connection connection, String name, ChaosSettings settings) {
        JobStream stream = JobStream.builder().stream(name).ackWait(settings.ackWait()).maxDeliver(MAX_DELIVER).build();
        return new JobQueue(connection, stream, SettlementJobs.on(connection, stream));
    }

    /** The stream's name, for the workers' {@code --stream}. */
    String stream() {
        return stream.stream();
    }

    /** Publishes one settlement job per merchant. */
    void publish(Collection<String> merchants) {
        merchants.forEach(merchant -> count(jobs.enqueue(merchant)));
    }

    /** Publishes a second job for {@code merchant}, distinct from its first by {@code batchId}, as a second batch would be. */
    void publishAgain(String merchant, String batchId) {
        count(jobs.enqueue(merchant, batchId));
    }

    private synchronized void count(SettlementJobs.Enqueued enqueued) {
        if (!enqueued.duplicate()) {
            published.merge(enqueued.merchant(), 1, Integer::sum);
        }
    }

    /** True when no job waits, none is handed back (waiting out a retry's delay) and none is in progress; false while the broker does not answer. */
    boolean idle() {
        try {
            Optional<JobQueueStatus> status = SettlementJobs.statusOf(connection, stream);
            return status.isPresent() && status.get().unfinished() == 0;
        } catch (StoreUnavailableException | IllegalStateException notNow) {
            return false; // e.g. reconnecting after a restart of the server
        }
    }

    /**
     * What became of the jobs, from the stream, its dead letters, its consumer and the workers' job
     * lines: published (a merchant's second jobs included), acked, dead-lettered, still queued or in
     * progress, and lost: gone from the stream with neither an ack nor a dead letter. Lost is counted
     * per merchant, so that a job counted twice for one (acked, and still in the stream after its ack
     * was lost) cannot hide another's loss.
     */
    synchronized ChaosReport.Jobs tally(Collection<String> merchants, List<EventLine> history) {
        Map<String, Long> ackedByMerchant = history.stream().filter(Events.ofJob(JobEvent.Type.ACKED)).map(EventLine.Job.class::cast)
                .filter(job -> merchants.contains(job.merchant())).collect(Collectors.groupingBy(EventLine.Job::merchant,
                        Collectors.mapping(EventLine.Job::sequence, Collectors.collectingAndThen(Collectors.toSet(), set -> (long) set.size()))));
        try {
            JetStreamManagement management = connection.jetStreamManagement();
            Map<String, Long> queued = subjects(management, stream.stream());
            Map<String, Long> dead = subjects(management, stream.deadStream());
            ConsumerInfo consumer = management.getConsumerInfo(stream.stream(), stream.consumer());
            long ackedJobs = 0;
            long deadJobs = 0;
            long unfinished = 0;
            long lost = 0;
            long publishedJobs = 0;
            for (String merchant : merchants) {
                long pub = published.getOrDefault(merchant, 0);
                long acked = ackedByMerchant.getOrDefault(merchant, 0L);
                long deadLettered = dead.getOrDefault(stream.deadSubject(merchant), 0L);
                long stillQueued = queued.getOrDefault(stream.jobSubject(merchant), 0L);
                publishedJobs += pub;
                ackedJobs += acked;
                deadJobs += deadLettered;
                unfinished += stillQueued;
                lost += Math.max(0, pub - acked - deadLettered - stillQueued);
            }
            long deliveries = consumer.getDelivered().getConsumerSequence();
            long deliveredJobs = publishedJobs - consumer.getNumPending();
            return new ChaosReport.Jobs((int) publishedJobs, (int) ackedJobs, (int) deadJobs, Math.max(0, deliveries - deliveredJobs), deliveries,
                    (int) unfinished, (int) lost);
        } catch (IOException | JetStreamApiException e) {
            throw new StoreUnavailableException("could not read the job stream " + stream.stream() + ": " + e.getMessage(), e);
        }
    }

    private static Map<String, Long> subjects(JetStreamManagement management, String name) throws IOException, JetStreamApiException {
        Map<String, Long> bySubject = management.getStreamInfo(name, StreamInfoOptions.allSubjects()).getStreamState().getSubjectMap();
        return bySubject == null ? Map.of() : bySubject;
    }

    /** Deletes the stream, its dead letters and its bucket; the end of the run, also on a shared server. */
    @Override
    public void close() {
        try {
            stream.delete(connection);
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            // the server is going away with the run, or was: nothing of the run's is kept on a shared one but this stream
            System.err.println("chaos: could not delete the stream " + stream.stream() + ": " + e.getMessage());
        }
    }

    /** Merchants with refunds still pending or sending; failed ones are the checker's business, not the drain's. */
    static Map<String, Long> unsettledByMerchant(DataSource db) throws SQLException {
        Map<String, Long> out = new LinkedHashMap<>();
        try (java.sql.Connection c = db.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT merchant, COUNT(*) FROM refund WHERE state IN ('pending', 'sending') GROUP BY merchant")) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getLong(2));
            }
        }
        return out;
    }
}
