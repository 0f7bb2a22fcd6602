package dev.fenced.fleet;

/**
 * The job stream at a glance.
 *
 * @param waiting jobs no worker has taken yet
 * @param inProgress jobs a worker has taken and not yet acked, including those handed back or
 *     retried that wait for their next delivery
 * @param redelivered jobs delivered more than once and not yet acked
 * @param deadLetters jobs sent to the dead letters and still kept there
 */
public record JobQueueStatus(long waiting, long inProgress, long redelivered, long deadLetters) {
}
