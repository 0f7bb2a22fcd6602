package dev.fenced.redis;

import dev.fenced.FencedObserver;
import dev.fenced.Lease;
import dev.fenced.LeaseArguments;
import dev.fenced.LogKeys;
import dev.fenced.TokenIssuerMismatchException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * What a {@link TokenPolicy} works on for one store: its connection, key layout, observer and
 * issuer, and the highest token it granted per resource. A policy is immutable and may serve
 * several stores; this is the one store's part. Thread-safe.
 */
final class PolicyContext {
    /** Policies log as the store does, so that one logger name configures all of a store's lines. */
    static final Logger LOG = LoggerFactory.getLogger(RedisLeaseStore.class);

    final RedisCalls calls;
    final RedisKeys keys;
    final FencedObserver observer;
    final TokenIssuer issuer;
    /** A readable prefix of owner ids, or null. */
    private final String ownerLabel;
    /**
     * The highest token granted per resource, against a counter that went back behind it (the
     * acquire script's "seen"). Bounded: past the limit the least recently acquired resource is
     * forgotten, which only weakens that check for it, as for a client that never saw its tokens
     * (the fence floor still reseeds a lost counter).
     */
    private final Map<String, Long> highestTokenSeen;

    PolicyContext(RedisCalls calls, RedisKeys keys, FencedObserver observer, TokenIssuer issuer, String ownerLabel, int tokensRemembered) {
        this.calls = calls;
        this.keys = keys;
        this.observer = observer;
        this.issuer = issuer;
        this.ownerLabel = ownerLabel;
        this.highestTokenSeen = Collections.synchronizedMap(new RecentTokens(tokensRemembered));
    }

    /** A new owner id: random, after the owner label when there is one. */
    String newOwnerId() {
        return LeaseArguments.newOwnerId(ownerLabel);
    }

    /** The highest token this store has granted for the resource, 0 for none. */
    long highestSeen(String resource) {
        return highestTokenSeen.getOrDefault(resource, 0L);
    }

    void saw(String resource, long token) {
        highestTokenSeen.merge(resource, token, Math::max);
    }

    int resourcesRemembered() {
        return highestTokenSeen.size();
    }

    Lease grant(String resource, long token, String ownerId) {
        return new RedisLease(resource, token, ownerId, keys.lockKey(resource), calls, observer);
    }

    /** The keys {@link RedisScripts#RAISE_COUNTER} takes. */
    String[] counterKeys(String resource) {
        return new String[] {keys.fenceKey(resource), keys.epochKey(resource), keys.issuerKey(resource)};
    }

    /** The refusal of a resource whose tokens another issuer hands out, logged once here. */
    TokenIssuerMismatchException otherIssuer(String resource, String recorded) {
        TokenIssuerMismatchException refused = new TokenIssuerMismatchException(resource, String.valueOf(recorded), issuer.recorded());
        try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource)) {
            LOG.error(refused.getMessage());
        }
        return refused;
    }

    /** The least recently acquired resources first, the oldest dropped past the limit. Not thread-safe on its own. */
    private static final class RecentTokens extends LinkedHashMap<String, Long> {
        private static final long serialVersionUID = 1L;
        private final int limit;

        RecentTokens(int limit) {
            super(16, 0.75f, true);
            this.limit = limit;
        }

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > limit;
        }
    }
}
