package dev.fenced.gateway;

/**
 * What the simulated gateway's webhook sender did so far: deliveries answered 2xx, events lost on
 * purpose, deliveries sent twice and held back on purpose, deliveries refused (any answer but 2xx,
 * or none) and events given up after every retry, and events still waiting (not yet due, held back
 * or to be retried).
 */
public record WebhookStats(long delivered, long lost, long duplicated, long reordered, long refusedDeliveries, long givenUp,
                           int waiting) {
    static final WebhookStats NONE = new WebhookStats(0, 0, 0, 0, 0, 0, 0);
}
