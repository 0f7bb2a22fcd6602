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
        floor.ifAvailable(builder::fenceFloor);
        if (properties.getTokens() == FencedProperties.Tokens.DATABASE) {
            TokenSource source = tokens.getIfAvailable();
            if (source == null) {
                throw new IllegalStateException("fenced.tokens=database needs a DataSource (or a TokenSource bean)");
            }
            builder.tokenSource(source);
        }
        return builder.observer(observer.getIfAvailable(() -> FencedObserver.NONE));
    }
}
