package dev.fenced.fleet;

import java.util.Locale;

/**
 * What a fleet worker did with one delivery of a job.
 *
 * @param sequence the job's sequence in the stream
 * @param delivery how many times JetStream has delivered it, this time included
 * @param detail the reason or outcome, free text
 */
public record JobEvent(Type type, String merchant, long sequence, long delivery, String detail, long atMillis) {

    /** What happened to a job delivery. */
    public enum Type {
        /** A delivery reached this worker. */
        RECEIVED,
        /** The job is done (every refund answered): acked, gone from the stream. */
        ACKED,
        /** Negatively acked with a delay: the lease was busy, or the gateway or a store failed. */
        RETRY,
        /** Handed back at once on a drain: another worker may take it now. */
        HANDED_BACK,
        /**
         * Neither acked nor handed back: another holder owns the merchant (a fence violation or a
         * lost lease); if no delivery of the job is live, AckWait hands it on.
         */
        LEFT,
        /** Sent to the dead letters and terminated. */
        DEAD_LETTERED;

        public String wireName() {
            return "job-" + name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        public static Type ofWireName(String wireName) {
            if (!wireName.startsWith("job-")) {
                throw new IllegalArgumentException("not a job event: " + wireName);
            }
            return valueOf(wireName.substring(4).toUpperCase(Locale.ROOT).replace('-', '_'));
        }
    }
}
