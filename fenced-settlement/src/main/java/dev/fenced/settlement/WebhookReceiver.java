package dev.fenced.settlement;

import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.WebhookEvent;
import dev.fenced.provider.WebhookRejectedException;
import dev.fenced.provider.WebhookSignature;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Objects;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Receives a provider's refund events (webhooks) and writes their news into the rows: a {@code sent}
 * row moves to {@code settled} when its refund succeeded, or to {@code returned}, with the
 * provider's reason, when it failed or was canceled after acceptance; a {@code settled} row moves
 * to {@code returned} when its refund failed after it succeeded. The same write as
 * {@link RefundLifecycle#poll} (which asks about {@code sent} rows only): forward only, only on a
 * row confirmed with the same refund id, merchant, amount and currency, no fence (RELIABILITY.md,
 * "The provider's final word").
 *
 * <p>What it guarantees: nothing is written for a delivery whose signature does not hold or whose
 * timestamp is outside the tolerance ({@link WebhookSignature}); each event id is remembered in
 * {@code provider_event} in the transaction that writes its effect, so a second delivery writes
 * nothing and says {@link Outcome#DUPLICATE}; deliveries out of order cannot move a row back, since
 * an earlier status ({@code pending}) moves nothing, {@code returned} is never left, and {@code settled}
 * is left only for {@code returned} (a card refund that failed after it succeeded). An event about
 * a row not yet {@code sent} (the worker has not confirmed it) is answered 409 and not remembered:
 * the provider delivers it again later. What it does not: it does not ask the provider anything
 * (rows without news are {@link RefundLifecycle#poll polled}), and it keeps event ids until an
 * operator deletes them.
 *
 * <p>It fits any HTTP server: hand it the {@code Stripe-Signature} header and the raw body, answer
 * with {@link Receipt#status()}. In a Spring MVC controller:
 * <pre>{@code
 * @PostMapping("/webhooks")
 * ResponseEntity<String> webhook(@RequestHeader(value = "Stripe-Signature", required = false) String signature,
 *                                @RequestBody byte[] body) {
 *     WebhookReceiver.Receipt receipt = receiver.receive(signature, body);
 *     return ResponseEntity.status(receipt.status()).body(receipt.message());
 * }
 * }</pre>
 * Immutable and thread-safe; every wait is the data source's.
 */
public final class WebhookReceiver {
    private static final Logger log = LoggerFactory.getLogger(WebhookReceiver.class);

    /** What one delivery did. */
    public enum Outcome {
        /** A sent row moved to settled. */
        SETTLED(200),
        /** A sent row, or a settled one whose refund failed after it succeeded, moved to returned, with the provider's reason. */
        RETURNED(200),
        /** Nothing to write: the refund is still pending, or its row already carries this news or a later one. */
        NO_CHANGE(200),
        /** The event was handled before: nothing written again. */
        DUPLICATE(200),
        /** The row is not sent yet: not remembered, answered 409 for the provider to deliver again. */
        NOT_YET_SENT(409),
        /** No row has this refund's reference: remembered, nothing written. */
        UNKNOWN_REFUND(200),
        /**
         * The row names another refund, merchant, amount or currency than the event, or was marked
         * failed: remembered, nothing written, logged for {@code reconcile} to resolve.
         */
        MISMATCH(200),
        /** An event of another kind than a refund's: remembered, nothing written. */
        IGNORED(200),
        /** A bad signature, a timestamp outside the tolerance, or a body that is not an event: nothing written. */
        REJECTED(400),
        /** The database could not be read or written: nothing written, answered 503 for the provider to deliver again. */
        STORE_UNAVAILABLE(503);

        private final int status;

        Outcome(int status) {
            this.status = status;
        }

        /** The HTTP status to answer the provider with. */
        public int status() {
            return status;
        }
    }

    /**
     * What a delivery did, and what to answer.
     *
     * @param eventId the provider's event id; null for a rejected delivery
     * @param refundId the row the event is about; null when unknown
     * @param message one line for a log and the answer's body: never a secret, a signature or the body
     */
    public record Receipt(Outcome outcome, String eventId, String refundId, String message) {
        public int status() {
            return outcome.status();
        }
    }

    /**
     * Reads a delivery's body, once its signature held, into an event: {@link WebhookEvent#parse}
     * for the simulated gateway's refunds, a provider adapter's reader for its own (fenced-stripe's
     * {@code StripeWebhookEvents::read} for Stripe's refund objects).
     */
    @FunctionalInterface
    public interface EventReader {
        /** @throws WebhookRejectedException for a body that is not an event this reader knows */
        WebhookEvent read(byte[] body);
    }

    private final DataSource dataSource;
    private final WebhookSignature signature;
    private final EventReader reader;

    private WebhookReceiver(DataSource dataSource, WebhookSignature signature, EventReader reader) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.signature = Objects.requireNonNull(signature, "signature");
        this.reader = Objects.requireNonNull(reader, "reader");
    }

    /** A receiver of events in the simulated gateway's shape ({@link WebhookEvent#parse}). */
    public static WebhookReceiver of(DataSource dataSource, WebhookSignature signature) {
        return new WebhookReceiver(dataSource, signature, WebhookEvent::parse);
    }

    /** A receiver of events that {@code reader} reads, e.g. a provider's own. */
    public static WebhookReceiver of(DataSource dataSource, WebhookSignature signature, EventReader reader) {
        return new WebhookReceiver(dataSource, signature, reader);
    }

    /**
     * Checks, reads and applies one delivery. Never throws for what the provider sent: a bad
     * delivery is a {@link Outcome#REJECTED} receipt.
     *
     * @param signatureHeader the {@code Stripe-Signature} header as received; null when absent
     * @param body the raw body, exactly as received (the signature is over these bytes)
     */
    public Receipt receive(String signatureHeader, byte[] body) {
        WebhookEvent event;
        try {
            signature.verify(signatureHeader, body);
            event = reader.read(body);
        } catch (WebhookRejectedException e) {
            log.warn("webhook refused: {}", e.getMessage());
            return new Receipt(Outcome.REJECTED, null, null, "refused: " + e.getMessage());
        } catch (RuntimeException e) { // a provider's reader that failed on what it was sent: the delivery, not the receiver, is at fault
            log.warn("webhook refused: the event could not be read: {}", e.toString());
            return new Receipt(Outcome.REJECTED, null, null, "refused: the event could not be read");
        }
        String refundId = event.aboutRefund() ? event.refund().reference() : null;
        try {
            Receipt receipt = apply(event);
            if (receipt.outcome() == Outcome.MISMATCH || receipt.outcome() == Outcome.RETURNED) {
                // A refund the customer did not get, or news that contradicts the row: an operator's to decide.
                log.warn("webhook {}: {}", event.id(), receipt.message());
            } else {
                log.debug("webhook {}: {}", event.id(), receipt.message());
            }
            return receipt;
        } catch (SQLException e) {
            log.warn("webhook {} not recorded, the database failed: {}", event.id(), e.getMessage());
            // The provider sees only that it should deliver again: the driver's words stay in this side's log.
            return new Receipt(Outcome.STORE_UNAVAILABLE, event.id(), refundId, "not recorded: the database failed; deliver again");
        }
    }

    private Receipt apply(WebhookEvent event) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(false);
            try {
                Receipt receipt = applyIn(connection, event);
                if (receipt.outcome() == Outcome.NOT_YET_SENT) {
                    connection.rollback();
                    return receipt;
                }
                if (!remember(connection, event, receipt.outcome())) {
                    connection.rollback();
                    return new Receipt(Outcome.DUPLICATE, event.id(), receipt.refundId(), event.id() + " was handled before: nothing written");
                }
                connection.commit();
                return receipt;
            } catch (SQLException | RuntimeException e) {
                connection.rollback();
                throw e;
            } finally {
                connection.setAutoCommit(autoCommit);
            }
        }
    }

    /**
     * Decides on the row as it is once no other transaction writes it: the row is read
     * {@code FOR UPDATE}, so a worker's confirm in progress is waited for (within the database's
     * lock timeout) rather than seen half-way, which under READ COMMITTED could make an event look
     * already applied to a row that was only just confirmed.
     */
    private static Receipt applyIn(Connection connection, WebhookEvent event) throws SQLException {
        if (!event.aboutRefund()) {
            return new Receipt(Outcome.IGNORED, event.id(), null, event.type() + " is not about a refund: nothing written");
        }
        GatewayRefund refund = event.refund();
        String rowId = refund.reference();
        RefundLifecycle.FinalWord word = RefundLifecycle.FinalWord.of(refund);
        if (word == null) {
            return new Receipt(Outcome.NO_CHANGE, event.id(), rowId, rowId + ": the refund is " + refund.status() + ", nothing to write");
        }
        String state;
        boolean same;
        try (PreparedStatement read = connection.prepareStatement(
                "SELECT state, merchant, gateway_reference, amount, currency FROM refund WHERE id = ? FOR UPDATE")) {
            read.setString(1, rowId);
            try (ResultSet rs = read.executeQuery()) {
                if (!rs.next()) {
                    return new Receipt(Outcome.UNKNOWN_REFUND, event.id(), rowId, "no row " + rowId + ": nothing written");
                }
                state = rs.getString(1);
                // Compared here, exactly: MariaDB's default collation would compare the text columns ignoring case.
                same = refund.merchant().equals(rs.getString(2)) && refund.id().equals(rs.getString(3))
                        && rs.getBigDecimal(4).compareTo(refund.amount()) == 0 && refund.currency().equals(rs.getString(5));
            }
        }
        if (state.equals("pending") || state.equals("sending")) {
            return new Receipt(Outcome.NOT_YET_SENT, event.id(), rowId, rowId + " is " + state
                    + ", not yet confirmed sent: deliver the event again later");
        }
        if (!same) {
            return new Receipt(Outcome.MISMATCH, event.id(), rowId, rowId + " (" + state + ") does not match refund " + refund.id()
                    + " of the event (" + refund.status() + "): nothing written, for reconcile");
        }
        if (!word.follows(state)) {
            return new Receipt(Outcome.NO_CHANGE, event.id(), rowId, rowId + " stays " + state + " (the event says " + refund.status() + ")");
        }
        if (!RefundLifecycle.moveForward(connection, rowId, refund.id(), word)) {
            throw new SQLException("the row " + rowId + " locked as " + state + " was not updated");
        }
        return new Receipt(word.settled() ? Outcome.SETTLED : Outcome.RETURNED, event.id(), rowId,
                rowId + " " + word.state() + (word.reason() == null ? "" : " (" + word.reason() + ")"));
    }

    /** Remembers the event; false when it was remembered before (a duplicate delivery). */
    private static boolean remember(Connection connection, WebhookEvent event, Outcome outcome) throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO provider_event (event_id, event_type, refund_id, outcome) VALUES (?, ?, ?, ?)")) {
            insert.setString(1, event.id());
            insert.setString(2, event.type());
            insert.setString(3, event.aboutRefund() ? event.refund().reference() : null);
            insert.setString(4, outcome.name().toLowerCase(Locale.ROOT));
            insert.executeUpdate();
            return true;
        } catch (SQLException e) {
            if ("23505".equals(e.getSQLState()) || e.getErrorCode() == 1062) { // the event id is taken (PostgreSQL, MariaDB): handled before
                return false;
            }
            throw e;
        }
    }
}
