package dev.fenced.lab;

import java.time.Duration;
import java.util.List;

/**
 * One row of the article's table: what protects the writes, and where the pause does the most
 * harm to it.
 *
 * @param articleTtl the lease TTL in article time (divided by the speed when run)
 * @param pausePhase where worker A is frozen when it reaches the stalled refund
 */
record Mechanism(String key, String label, boolean fencing, boolean renewal, boolean checkBeforeWrite, boolean idempotency,
                 Duration articleTtl, String pausePhase) {

    static final Mechanism TTL_ONLY = new Mechanism("ttl", "TTL lock only", false, false, false, false,
            Duration.ofSeconds(30), "after-claim");
    static final Mechanism RENEWAL = new Mechanism("renewal", "TTL lock + background renewal", false, true, false, false,
            Duration.ofSeconds(30), "after-claim");
    static final Mechanism CHECK = new Mechanism("check", "TTL lock + check-before-write", false, true, true, false,
            Duration.ofSeconds(30), "before-confirm");
    static final Mechanism FENCE = new Mechanism("fence", "fencing token, gateway without idempotency", true, true, false, false,
            Duration.ofSeconds(30), "after-claim");
    static final Mechanism FENCE_IDEMPOTENT = new Mechanism("fence+idempotency", "fencing token + idempotency key", true, true, false, true,
            Duration.ofSeconds(30), "after-claim");
    static final Mechanism LONG_TTL = new Mechanism("ttl-5min", "TTL lock only, 5-minute TTL", false, false, false, false,
            Duration.ofMinutes(5), "after-claim");

    static final List<Mechanism> ALL = List.of(TTL_ONLY, RENEWAL, CHECK, FENCE, FENCE_IDEMPOTENT, LONG_TTL);

    /** The demo's negative control: the article's design with the fence switched off. */
    Mechanism withoutFence() {
        return new Mechanism(key + "-nofence", label + " without the fence", false, renewal, checkBeforeWrite, idempotency, articleTtl, pausePhase);
    }

    List<String> workerFlags() {
        List<String> flags = new java.util.ArrayList<>();
        if (!fencing) {
            flags.add("--no-fence");
        }
        if (!renewal) {
            flags.add("--no-renewal");
        }
        if (checkBeforeWrite) {
            flags.add("--check-before-write");
        }
        return flags;
    }
}
