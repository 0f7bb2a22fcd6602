package dev.fenced.gateway;

import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.WebhookEvent;
import dev.fenced.provider.WebhookSignature;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Posts the simulated gateway's refund events to its webhook URL, as a provider does: signed
 * ({@link WebhookSignature}, with the delivery's time on the gateway's clock), one at a time,
 * retried with a growing pause on any answer but 2xx, given up after {@link #ATTEMPTS}. Events are
 * due on the gateway's clock (a refund's final event when it settles), so a test that moves the
 * clock makes them due without waiting; retries and held-back deliveries wait on real time.
 *
 * <p>What it does not do: keep events across a restart (pending ones are lost, as the
 * {@code lost} fault loses them; polling finds what they would have said), or retry for days as
 * Stripe does. Thread-safe: one thread delivers, under the queue's lock for everything but the
 * HTTP call.
 */
final class WebhookSender implements AutoCloseable {
    /** Deliveries of one event before it is given up. */
    static final int ATTEMPTS = 6;
    private static final Duration FIRST_RETRY = Duration.ofMillis(500);
    private static final Duration HELD_BACK = Duration.ofSeconds(1);
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final long TICK_MILLIS = 50;
    /** Compared by identity of value, not by time: {@code nanoTime()} may be negative, so no time stands for "not held". */
    private static final long NOT_HELD = Long.MIN_VALUE;

    /** {@code heldUntilNanos}: a {@link System#nanoTime()} before which it is not sent; {@link #NOT_HELD} for none. */
    private record Pending(WebhookEvent event, long dueAt, long heldUntilNanos, int attempt, boolean faultDrawn, long order)
            implements Comparable<Pending> {
        @Override
        public int compareTo(Pending other) {
            int due = Long.compare(dueAt, other.dueAt);
            return due != 0 ? due : Long.compare(order, other.order);
        }
    }

    private final URI url;
    private final String secret;
    private final Clock clock;
    private final RefundStatuses statuses;
    private final double lost;
    private final double duplicated;
    private final double reordered;
    private final Random faults;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    private final PriorityQueue<Pending> queue = new PriorityQueue<>(); // guarded by itself
    private int delivering; // taken off the queue and not yet delivered, given up or put back; guarded by queue
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread t = new Thread(runnable, "gateway-webhooks");
        t.setDaemon(true);
        return t;
    });
    private final AtomicLong order = new AtomicLong();
    private final AtomicLong eventIds = new AtomicLong();
    /** Part of every event id: ids stay unique across the gateway's restarts, as a provider's are. */
    private final String run = Long.toHexString(new java.security.SecureRandom().nextLong() & 0xffffffffffL);
    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong lostCount = new AtomicLong();
    private final AtomicLong duplicatedCount = new AtomicLong();
    private final AtomicLong reorderedCount = new AtomicLong();
    private final AtomicLong refusedDeliveries = new AtomicLong();
    private final AtomicLong givenUp = new AtomicLong();

    WebhookSender(GatewayConfig config, RefundStatuses statuses) {
        this.url = config.webhookUrl();
        this.secret = config.webhookSecret();
        this.clock = config.clock();
        this.statuses = statuses;
        this.lost = config.webhookLost();
        this.duplicated = config.webhookDuplicated();
        this.reordered = config.webhookReordered();
        this.faults = new Random(config.seed() * 17 + 5);
        thread.scheduleWithFixedDelay(this::deliverDue, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * A refund was made: its {@code refund.created} now, its final event when it settles, if that is
     * later, and its {@code refund.failed} when it fails after success.
     */
    void created(GatewayRefund refund) {
        GatewayRefund now = statuses.current(refund);
        long at = clock.millis();
        enqueue(event(WebhookEvent.REFUND_CREATED, now, at), at);
        if (!now.finalStatus()) {
            GatewayRefund settled = statuses.settled(refund);
            String type = GatewayRefund.SUCCEEDED.equals(settled.status()) ? WebhookEvent.REFUND_UPDATED : WebhookEvent.REFUND_FAILED;
            long settlesAt = statuses.settlesAt(refund);
            enqueue(event(type, settled, settlesAt), settlesAt);
        }
        if (RefundStatuses.failsAfterSuccess(refund) && GatewayRefund.SUCCEEDED.equals(statuses.settled(refund).status())) {
            long failsAt = statuses.failsAt(refund);
            enqueue(event(WebhookEvent.REFUND_FAILED, RefundStatuses.failedAfterSuccess(refund), failsAt), failsAt);
        }
    }

    WebhookStats stats() {
        synchronized (queue) {
            return new WebhookStats(delivered.get(), lostCount.get(), duplicatedCount.get(), reorderedCount.get(), refusedDeliveries.get(),
                    givenUp.get(), queue.size() + delivering);
        }
    }

    private WebhookEvent event(String type, GatewayRefund refund, long atMillis) {
        return new WebhookEvent(String.format("evt_%s_%06d", run, eventIds.incrementAndGet()), type, atMillis / 1000, refund);
    }

    private void enqueue(WebhookEvent event, long dueAt) {
        synchronized (queue) {
            queue.add(new Pending(event, dueAt, NOT_HELD, 0, false, order.incrementAndGet()));
        }
    }

    private void deliverDue() {
        try {
            Pending next;
            while (!Thread.currentThread().isInterrupted() && (next = nextDue()) != null) {
                try {
                    deliver(next);
                } finally {
                    synchronized (queue) {
                        delivering--;
                    }
                }
            }
        } catch (RuntimeException e) {
            System.err.println("gateway: webhook delivery failed: " + e); // keeps the schedule alive
        }
    }

    /** The first event due now and not held back, its fault drawn (a lost one is skipped); null when none is. */
    private Pending nextDue() {
        long now = clock.millis();
        long nanos = System.nanoTime();
        synchronized (queue) {
            while (true) {
                Pending found = null;
                List<Pending> heldBack = new ArrayList<>();
                while (!queue.isEmpty() && queue.peek().dueAt() <= now) {
                    Pending head = queue.poll();
                    if (head.heldUntilNanos() != NOT_HELD && head.heldUntilNanos() - nanos > 0) {
                        heldBack.add(head);
                    } else {
                        found = head;
                        break;
                    }
                }
                queue.addAll(heldBack);
                if (found == null) {
                    return null;
                }
                if (found.faultDrawn()) {
                    delivering++;
                    return found;
                }
                double draw = faults.nextDouble();
                if (draw < lost) {
                    lostCount.incrementAndGet();
                } else if (draw < lost + duplicated) {
                    duplicatedCount.incrementAndGet();
                    queue.add(new Pending(found.event(), found.dueAt(), NOT_HELD, 0, true, order.incrementAndGet()));
                    delivering++;
                    return found;
                } else if (draw < lost + duplicated + reordered) {
                    reorderedCount.incrementAndGet(); // later events overtake it
                    queue.add(new Pending(found.event(), found.dueAt(), nanos + HELD_BACK.toNanos(), 0, true, order.incrementAndGet()));
                } else {
                    delivering++;
                    return found;
                }
            }
        }
    }

    private void deliver(Pending pending) {
        byte[] stripe = StripeEndpoint.eventBody(pending.event());
        byte[] body = stripe != null ? stripe : pending.event().toJson(); // each refund's news in the shape of the API that made it
        boolean accepted;
        CompletableFuture<HttpResponse<Void>> exchange = http.sendAsync(HttpRequest.newBuilder(url).timeout(TIMEOUT)
                .header("Content-Type", "application/json")
                .header(WebhookSignature.HEADER, WebhookSignature.header(clock.millis() / 1000, body, List.of(secret)))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.discarding());
        try {
            // The request's timeout covers the answer's headers only: a receiver stalling its body is cut here.
            accepted = exchange.get(TIMEOUT.toMillis() * 2, TimeUnit.MILLISECONDS).statusCode() / 100 == 2;
        } catch (ExecutionException | TimeoutException e) {
            exchange.cancel(true);
            accepted = false;
        } catch (InterruptedException e) {
            exchange.cancel(true);
            Thread.currentThread().interrupt();
            return;
        }
        if (accepted) {
            delivered.incrementAndGet();
            return;
        }
        refusedDeliveries.incrementAndGet();
        int attempt = pending.attempt() + 1;
        if (attempt >= ATTEMPTS) {
            givenUp.incrementAndGet();
            return;
        }
        long pause = FIRST_RETRY.toNanos() << (attempt - 1);
        synchronized (queue) {
            queue.add(new Pending(pending.event(), pending.dueAt(), System.nanoTime() + pause, attempt, true, order.incrementAndGet()));
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
