package dev.fenced.settlement;

import dev.fenced.provider.RefundGateway;
import dev.fenced.provider.GatewayException;
import dev.fenced.provider.GatewayRefund;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * The worker's calls to the gateway for one refund: every attempt and every lookup under the row's
 * own idempotency key, every attempt naming the row's {@link RefundOwner} as metadata, a bounded
 * number of attempts with exponential backoff and jitter, and one {@link GatewayAnswer} at the end.
 * Retries stop early when {@code stop} says the run is over. Thread-safe.
 */
final class GatewayCalls {
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(2);
    /** The longest {@code Retry-After} honoured; a longer one is cut to this, and the request then simply asks again. */
    static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(30);
    /** How often a wait for a {@code Retry-After} looks at the run's stop and the row's deadline. */
    private static final Duration WAIT_STEP = Duration.ofMillis(200);

    private final RefundGateway gateway;
    private final int attempts;
    private final Duration backoff;
    private final BooleanSupplier stop;
    private final KeyRetention keyRetention;
    /**
     * No attempt of this run starts before this {@link System#nanoTime()}: a provider that answered
     * 429 with {@code Retry-After} is given that long by every refund in flight, not just the one it
     * answered.
     */
    private final AtomicLong notBefore = new AtomicLong(System.nanoTime());

    GatewayCalls(RefundGateway gateway, int attempts, Duration backoff, BooleanSupplier stop, KeyRetention keyRetention) {
        this.gateway = gateway;
        this.attempts = attempts;
        this.backoff = backoff;
        this.stop = stop;
        this.keyRetention = keyRetention;
    }

    /**
     * Sends the refund. When some attempt's answer was lost (the refund may exist), the answer is
     * the lookup's: a refund found under the key (by reference once the key may be forgotten), or
     * {@link GatewayAnswer.Kind#UNKNOWN} still, even when a later attempt was refused; the next
     * holder's lookup then settles it. No retry starts past the row's {@link KeyRetention#sendDeadline}.
     */
    GatewayAnswer create(RefundRow row) {
        Instant deadline = keyRetention.sendDeadline(row);
        GatewayAnswer last = null;
        boolean mayExist = false;
        for (int attempt = 1; attempt <= attempts; attempt++) {
            if (attempt > 1) {
                if (stop.getAsBoolean()) {
                    break;
                }
                sleep(delay(attempt - 1));
            }
            boolean waited = waitForRetryAfter(deadline);
            if ((attempt > 1 || waited) && (stop.getAsBoolean() || keyRetention.passed(deadline))) {
                if (attempt == 1) { // nothing sent yet: the row can go back to pending
                    return new GatewayAnswer(GatewayAnswer.Kind.UNAVAILABLE, null, "not sent: the gateway asked to wait, and meanwhile "
                            + (stop.getAsBoolean() ? "the run stopped" : "the key's retention ran out"));
                }
                break; // stopped meanwhile, or the provider may forget the key before this request reaches it
            }
            try {
                return GatewayAnswer.of(row, gateway.createRefund(row.idempotencyKey(), row.id(), row.merchant(), row.amount(), row.currency(),
                        row.owner().metadata()));
            } catch (GatewayException e) {
                last = GatewayAnswer.failed(e);
                e.retryAfter().ifPresent(this::holdOff);
                if (last.credentialsRefused()) {
                    if (!mayExist) {
                        return last; // no retry will be let in either
                    }
                    break; // look up what an earlier attempt may have made; the refusal goes up with the answer
                }
                if (last.kind() == GatewayAnswer.Kind.REJECTED) {
                    if (!mayExist) {
                        return last;
                    }
                    break; // a refusal now says nothing of an earlier attempt whose answer was lost: look it up
                }
                mayExist |= last.kind() == GatewayAnswer.Kind.UNKNOWN;
            }
        }
        if (!mayExist) {
            return last;
        }
        GatewayAnswer lookup = lookup(row, keyRetention.passed(deadline));
        // Absent is no proof: a request still in flight at the gateway may yet create it.
        return lookup.kind() == GatewayAnswer.Kind.SUCCEEDED || lookup.kind() == GatewayAnswer.Kind.REJECTED ? lookup
                : new GatewayAnswer(GatewayAnswer.Kind.UNKNOWN, null, last.reason(), last.credentialsRefused() || lookup.credentialsRefused());
    }

    /**
     * The longest {@link #create} can take when each call is bounded by {@code callTimeout}: every
     * attempt, each after the longest {@code Retry-After} honoured, every backoff at its upper bound,
     * and the closing lookup.
     */
    static Duration longestCreate(int attempts, Duration backoff, Duration callTimeout) {
        Duration longest = callTimeout.multipliedBy(attempts + 1L).plus(MAX_RETRY_AFTER.multipliedBy(attempts));
        for (int retry = 1; retry < attempts; retry++) {
            longest = longest.plus(step(backoff, retry));
        }
        return longest;
    }

    /** Asks whether a refund exists under the row's key; one attempt. */
    GatewayAnswer lookup(RefundRow row) {
        return lookup(row, false);
    }

    /**
     * Asks whether the row's refund exists; one attempt. Under the row's key, or, when
     * {@code byReference} (the key may be forgotten), by the provider's own lookup, where only a
     * refund that matches the row counts: another's refund with the same reference is not this
     * row's, and says nothing of it.
     */
    GatewayAnswer lookup(RefundRow row, boolean byReference) {
        try {
            if (byReference) {
                List<GatewayRefund> found = gateway.findByReference(row.merchant(), row.id());
                return found.stream().map(refund -> GatewayAnswer.of(row, refund)).filter(answer -> answer.kind() == GatewayAnswer.Kind.SUCCEEDED)
                        .findFirst().orElseGet(GatewayAnswer::absent);
            }
            return gateway.findByKey(row.merchant(), row.id(), row.idempotencyKey()).map(refund -> GatewayAnswer.of(row, refund)).orElseGet(GatewayAnswer::absent);
        } catch (GatewayException e) {
            GatewayAnswer failed = GatewayAnswer.failed(e);
            // A refused lookup says nothing about the refund itself.
            return failed.kind() == GatewayAnswer.Kind.REJECTED ? new GatewayAnswer(GatewayAnswer.Kind.UNKNOWN, null, failed.reason()) : failed;
        }
    }

    private void holdOff(Duration retryAfter) {
        long wait = Math.min(retryAfter.toNanos(), MAX_RETRY_AFTER.toNanos());
        notBefore.accumulateAndGet(System.nanoTime() + wait, (current, asked) -> asked - current > 0 ? asked : current);
    }

    /**
     * Waits until no {@code Retry-After} holds the run back, in short steps, so that a wait another
     * refund extends meanwhile is kept too; gives up early when the run stops or the row's deadline
     * passes. Whether it waited at all.
     */
    private boolean waitForRetryAfter(Instant deadline) {
        boolean waited = false;
        long wait;
        while ((wait = notBefore.get() - System.nanoTime()) > 0 && !stop.getAsBoolean() && !keyRetention.passed(deadline)) {
            waited = true;
            sleep(Duration.ofMillis(Math.min(WAIT_STEP.toMillis(), (wait + 999_999) / 1_000_000))); // rounded up: the wait is a floor
        }
        return waited;
    }

    /** An exponential step with jitter over its upper half: spreads the retries of many workers after one outage. */
    private Duration delay(int retry) {
        long step = step(backoff, retry).toMillis();
        return Duration.ofMillis(step / 2 + ThreadLocalRandom.current().nextLong(step / 2 + 1));
    }

    private static Duration step(Duration backoff, int retry) {
        return Duration.ofMillis(Math.min(MAX_BACKOFF.toMillis(), backoff.toMillis() << Math.min(retry - 1, 20)));
    }

    private static void sleep(Duration delay) {
        try {
            Thread.sleep(delay.toMillis()); // the backoff between two attempts, not a stand-in for a pause
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
