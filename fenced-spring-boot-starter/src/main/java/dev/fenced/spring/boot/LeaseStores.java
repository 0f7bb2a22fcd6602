package dev.fenced.spring.boot;

import dev.fenced.FenceFloor;
import dev.fenced.FencedObserver;
import dev.fenced.TokenSource;
import dev.fenced.redis.RedisLeaseStore;
import org.springframework.beans.factory.ObjectProvider;

/** The settings every Redis lease store takes, whichever connection it runs on. */
final class LeaseStores {
    private LeaseStores() {
    }

    static RedisLeaseStore.Builder configure(RedisLeaseStore.Builder builder, FencedProperties properties,
                                             ObjectProvider<FenceFloor> floor, ObjectProvider<TokenSource> tokens,
                                             ObjectProvider<FencedObserver> observer) {
        FencedProperties.Redis redis = properties.getRedis();
        if (redis.getKeyPrefix() != null) {
            builder.keyPrefix(redis.getKeyPrefix());
        }
        if (redis.getOwnerLabel() != null) {
            builder.ownerLabel(redis.getOwnerLabel());
        }
        FencedProperties.Tokens from = properties.getTokens();
        if (from == FencedProperties.Tokens.REDIS) {
            floor.ifAvailable(builder::fenceFloor);
            return builder.observer(observer.getIfAvailable(() -> FencedObserver.NONE));
        }
        TokenSource source = tokens.getIfAvailable();
        String name = from.name().toLowerCase(java.util.Locale.ROOT);
        if (source == null) {
            throw new IllegalStateException("fenced.tokens=" + name + " needs a DataSource (or a TokenSource bean)");
        }
        if (from == FencedProperties.Tokens.EPOCHS) {
            if (floor.getIfAvailable() != null) {
                throw new IllegalStateException("fenced.tokens=epochs replaces the fence floor: remove fenced.floor.* (or the FenceFloor bean)");
            }
            builder.tokenEpochs(source);
        } else {
            floor.ifAvailable(builder::fenceFloor);
            builder.tokenSource(source);
        }
        return builder.observer(observer.getIfAvailable(() -> FencedObserver.NONE));
    }
}
