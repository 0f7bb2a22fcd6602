package dev.fenced.stripe;

import com.stripe.exception.EventDataObjectDeserializationException;
import com.stripe.model.Event;
import com.stripe.model.Refund;
import com.stripe.model.StripeObject;
import com.stripe.net.ApiResource;
import dev.fenced.provider.WebhookEvent;
import dev.fenced.provider.WebhookRejectedException;
import java.nio.charset.StandardCharsets;

/**
 * Reads Stripe's webhook events with Stripe's own library, for
 * {@code WebhookReceiver.of(dataSource, signature, StripeWebhookEvents::read)}: a refund event's
 * {@code data.object} is a Stripe refund, whose row the adapter's metadata names
 * ({@link StripeRefundGateway#toGateway}). The signature is checked before, by the receiver, in the
 * same scheme as Stripe's {@code Webhook.constructEvent}. {@code refund.*} and
 * {@code charge.refund.*} events carry the refund; events of other kinds carry none.
 */
public final class StripeWebhookEvents {
    private StripeWebhookEvents() {
    }

    /** @throws WebhookRejectedException for a body that is not a Stripe event, or a refund event without a readable refund */
    public static WebhookEvent read(byte[] body) {
        if (body.length > WebhookEvent.MAX_BODY) {
            throw new WebhookRejectedException("event body is larger than " + WebhookEvent.MAX_BODY + " bytes");
        }
        Event event;
        try {
            event = ApiResource.GSON.fromJson(new String(body, StandardCharsets.UTF_8), Event.class);
        } catch (RuntimeException e) {
            throw new WebhookRejectedException("event body is not a Stripe event");
        }
        if (event == null || event.getId() == null || event.getType() == null) {
            throw new WebhookRejectedException("event body is not a Stripe event: no id or type");
        }
        long created = event.getCreated() == null ? 0 : event.getCreated();
        if (!event.getType().startsWith("refund.") && !event.getType().startsWith("charge.refund.")) {
            return new WebhookEvent(event.getId(), event.getType(), created, null);
        }
        StripeObject object;
        try {
            // Unsafe only in that it ignores the event's API version: the refund fields read here are the same in every version.
            object = event.getDataObjectDeserializer().deserializeUnsafe();
        } catch (EventDataObjectDeserializationException | RuntimeException e) {
            throw new WebhookRejectedException("event " + event.getId() + " does not carry a readable refund");
        }
        if (!(object instanceof Refund refund) || refund.getId() == null || refund.getAmount() == null || refund.getCurrency() == null
                || refund.getStatus() == null) {
            throw new WebhookRejectedException("event " + event.getId() + " does not carry a refund with its id, amount, currency and status");
        }
        try {
            // The receiver reads refund events by type: charge.refund.updated carries the same refund object as refund.updated.
            String type = event.getType().startsWith("charge.") ? event.getType().substring("charge.".length()) : event.getType();
            return new WebhookEvent(event.getId(), type, created, StripeRefundGateway.toGateway(refund));
        } catch (RuntimeException e) {
            throw new WebhookRejectedException("event " + event.getId() + " carries a refund that cannot be read: " + e.getMessage());
        }
    }
}
