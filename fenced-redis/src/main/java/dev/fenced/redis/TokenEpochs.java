package dev.fenced.redis;

import static dev.fenced.redis.PolicyContext.LOG;

import dev.fenced.EpochSource;
import dev.fenced.Lease;
import dev.fenced.LogKeys;
import dev.fenced.StoreUnavailableException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.MDC;

/**
 * {@link TokenPolicy#epochs}: Redis's counter in epochs drawn from an {@link EpochSource}, a token
 * being {@code epoch << 24 | counter}. The usual acquisition is one round trip
 * ({@link RedisScripts#ACQUIRE_IN_EPOCH}); a new epoch is drawn only when Redis asks for one.
 * Tokens never repeat or go back whatever Redis loses. Does not guarantee exclusivity across a
 * failover to a replica that had not received the lease, nor rising tokens from two primaries at
 * once (a split brain: each has epochs of its own): the fence still holds.
 */
final class TokenEpochs extends TokenPolicy {
    /** A token is epoch &lt;&lt; 24 | counter: 2^39 epochs of 2^24 tokens each. */
    static final int EPOCH_SHIFT = 24;
    private static final long MAX_EPOCH = (1L << 39) - 1;

    private final EpochSource epochs;

    TokenEpochs(EpochSource epochs) {
        super(TokenIssuer.EPOCHS);
        this.epochs = epochs;
    }

    /**
     * See {@link RedisScripts#ACQUIRE_IN_EPOCH}: a new epoch is drawn only when Redis asks for one,
     * for the server that asked; if the keys moved to another server meanwhile, Redis asks again.
     */
    @Override
    Optional<Lease> acquire(PolicyContext store, String resource, Duration ttl, String ownerId) {
        RedisKeys keys = store.keys;
        String[] epochKeys = {keys.lockKey(resource), keys.fenceKey(resource), keys.epochKey(resource), keys.issuerKey(resource),
            keys.epochTicketKey(resource)};
        String newEpoch = "";
        String server = "";
        String ticket = "";
        for (int attempt = 0; attempt < 3; attempt++) {
            List<Object> reply = store.calls.scriptList(RedisScripts.ACQUIRE_IN_EPOCH, epochKeys, ownerId, Long.toString(ttl.toMillis()),
                    newEpoch, server, issuer().recorded(), ticket, UUID.randomUUID().toString());
            long counter = (Long) reply.get(0);
            long held = (Long) reply.get(1);
            if (counter == RedisScripts.HELD) {
                return Optional.empty();
            }
            if (counter == RedisScripts.OTHER_ISSUER) {
                throw store.otherIssuer(resource, (String) reply.get(2));
            }
            if (counter > 0) {
                return Optional.of(store.grant(resource, (held << EPOCH_SHIFT) | counter, ownerId));
            }
            server = (String) reply.get(2);
            ticket = (String) reply.get(3);
            long drawn = epochs.nextEpoch(resource);
            if (drawn <= held || drawn > MAX_EPOCH) {
                throw new IllegalStateException("the token epoch source gave " + drawn + " for '" + resource + "', which is not above the"
                        + " epoch " + held + " Redis holds or is over " + MAX_EPOCH + "; was its database restored from an older backup?");
            }
            try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource)) {
                if (held == 0) {
                    LOG.info("tokens of {} begin in epoch {}", resource, drawn);
                } else {
                    LOG.warn("Redis may have lost tokens of {} (epoch {} began on another redis-server process or replication"
                            + " history, or its counter is gone); tokens go on in epoch {}, above every token issued before",
                            resource, held, drawn);
                    store.observer.counterReseeded(resource, held << EPOCH_SHIFT, drawn << EPOCH_SHIFT);
                }
            }
            newEpoch = Long.toString(drawn);
        }
        throw new StoreUnavailableException("the keys of '" + resource + "' moved to another Redis server three times while a new"
                + " token epoch was drawn for them; a failover under way?", null);
    }

    @Override
    void observeStoredFence(PolicyContext store, String resource, long storedFence) {
        if (storedFence <= 0) {
            return;
        }
        long counter = storedFence & ((1L << EPOCH_SHIFT) - 1);
        long before = store.calls.script(RedisScripts.RAISE_IN_EPOCH, new String[] {store.keys.fenceKey(resource),
            store.keys.epochKey(resource)}, Long.toString(storedFence >>> EPOCH_SHIFT), Long.toString(counter));
        if (before >= 0 && before < counter) {
            counterRaised(store, resource, before, storedFence);
        }
    }

    @Override
    long raiseCounter(PolicyContext store, String resource, long floor) {
        throw new IllegalStateException("a store with token epochs has no counter to seed: its epochs come from their source");
    }

    /** No counter and no epoch: the next acquisition draws an epoch, which the caller raised above {@code highestIssued}. */
    @Override
    String counterAfterSwitch(long highestIssued) {
        return "";
    }

    @Override
    public String toString() {
        return "TokenPolicy.epochs(" + epochs + ")";
    }
}
