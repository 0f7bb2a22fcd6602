package dev.fenced.provider;

import dev.fenced.FencedException;

/**
 * A webhook delivery refused before anything was written: its signature does not hold, its
 * timestamp is outside the tolerance, or its body is not an event. The message says which, and
 * never carries a secret, a signature or the body: it is meant for a log line and a 400 answer.
 */
public class WebhookRejectedException extends FencedException {
    public WebhookRejectedException(String message) {
        super(message);
    }
}
