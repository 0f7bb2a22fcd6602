package dev.fenced.redis;

import java.util.Locale;

/**
 * Who issues a resource's fencing tokens in a {@link RedisLeaseStore}, recorded beside its counter
 * ({@link RedisKeys#issuerKey}) by the first grant and checked by every later one: tokens of
 * different issuers do not order, so a store of another issuer is refused with
 * {@link dev.fenced.TokenIssuerMismatchException}. Switching a resource is
 * {@link RedisLeaseStore#switchTokenIssuer}.
 *
 * <p>Guarantees: two stores that issue tokens differently never both hold a resource while the key
 * is there. Does not guarantee: telling two durable sources apart (they are both {@link #SOURCE}),
 * nor the check once Redis lost the key (the next grant records its own issuer again); a lost
 * counter is still reseeded above the stored fences, and epochs start above every earlier one.
 */
public enum TokenIssuer {
    /** Redis's own counter, beside the lease ({@code RedisLeaseStore.Builder.fenceFloor} reseeds it). */
    REDIS,
    /** Redis's counter in epochs from a durable source ({@code RedisLeaseStore.Builder.tokenEpochs}). */
    EPOCHS,
    /** A durable {@code TokenSource}; Redis keeps only the lease ({@code RedisLeaseStore.Builder.tokenSource}). */
    SOURCE;

    /** The name as Redis keeps it: {@code redis}, {@code epochs}, {@code source}. */
    public String recorded() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The issuer Redis recorded, or null for none or a name this version does not know. */
    public static TokenIssuer ofRecorded(String recorded) {
        for (TokenIssuer issuer : values()) {
            if (issuer.recorded().equals(recorded)) {
                return issuer;
            }
        }
        return null;
    }
}
