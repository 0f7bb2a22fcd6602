package dev.fenced.fleet;

/**
 * The job stream at a glance. JetStream's consumer info counts a job a worker handed back (a
 * drain's nak, or a retry's nak with a delay) among the ack-pending ones until it is delivered
 * again, as it counts the jobs workers hold: the workers record their hand-backs in the bucket
 * {@link JobStream#handedBackBucket()}, and this status takes those out of ack-pending. A job whose
 * worker died without answering still counts as in progress until AckWait hands it on.
 *
 * @param waiting jobs no worker has taken yet
 * @param handedBack jobs a worker handed back, waiting for their next delivery
 * @param inProgress jobs a worker holds now: taken, not yet answered
 * @param redelivered jobs delivered more than once and not yet acked
 * @param deadLetters jobs sent to the dead letters and still kept there
 */
public record JobQueueStatus(long waiting, long handedBack, long inProgress, long redelivered, long deadLetters) {

    /** Jobs not yet done: waiting, handed back or in progress. */
    public long unfinished() {
        return waiting + handedBack + inProgress;
    }
}
