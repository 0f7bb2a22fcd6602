package dev.fenced.settlement;

import java.util.Locale;

/**
 * One thing a settlement worker did, for timelines and histories.
 *
 * @param type what happened
 * @param worker the worker's name
 * @param refundId the refund concerned, or null
 * @param token the worker's token (0 before it has one)
 * @param detail free text: a gateway id, a stored fence, an outcome, a reason
 * @param atMillis wall-clock epoch milliseconds
 */
public record SettlementEvent(Type type, String worker, String refundId, long token, String detail, long atMillis) {

    /** What a worker can do; {@link #wireName()} is its name in event lines and histories. */
    public enum Type {
        /**
         * Took the lease; the detail is the resource and how long the acquisition took
         * ({@code "settle:m_4471 in 2 ms"}): the worker asked that long before the event's time.
         */
        ACQUIRED,
        /** Appended the journal lines the merchant's confirmed refunds lacked; the refund id is the merchant, the detail counts them. */
        JOURNALED,
        /** Found the lease held by another holder and did nothing. */
        BUSY,
        /** Looked up a row found in {@code sending} at the gateway, under its key. */
        CHECKED,
        CLAIMED,
        /** The gateway answered with a refund; the detail is its id. */
        GATEWAY,
        CONFIRMED,
        /** A definitive refusal by the gateway: the row is marked failed. */
        FAILED,
        /** A row an earlier holder finished. */
        SKIPPED,
        /** A row put back to {@code pending}, or left {@code sending} in doubt. */
        LEFT,
        GATEWAY_DOWN,
        /** The database refused a write of this token. */
        VIOLATION,
        LEASE_LOST,
        RELEASED,
        /** The run ended; the detail is its {@link SettlementOutcome.Result}. */
        OUTCOME,
        ERROR,
        /** A bound on a database wait ran out; the detail names the rows and the wait. The run stops claiming. */
        DATABASE_WAIT,
        /** A phase hook stopped the worker here (tests and the lab's orchestrators). */
        BREAKPOINT;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        /** The type of a wire name; an IllegalArgumentException for an unknown one. */
        public static Type ofWireName(String wireName) {
            return valueOf(wireName.toUpperCase(Locale.ROOT).replace('-', '_'));
        }
    }
}
