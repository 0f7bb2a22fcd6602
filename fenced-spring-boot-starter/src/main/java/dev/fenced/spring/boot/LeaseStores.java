package dev.fenced.spring.boot;

import dev.fenced.EpochSource;
import dev.fenced.FenceFloor;
import dev.fenced.FencedObserver;
import dev.fenced.TokenSource;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenIssuer;
import org.springframework.beans.factory.ObjectProvider;

/** The settings every Redis lease store takes, whichever connection it runs on. */
final class LeaseStores {
    private LeaseStores() {
    }

    static RedisLeaseStore.Builder configure(RedisLeaseStore.Builder builder, FencedProperties properties,
                                             ObjectProvider<FenceFloor> floor, ObjectProvider<TokenSource> tokens,
                                             ObjectProvider<EpochSource> epochs, ObjectProvider<FencedObserver> observer) {
        FencedProperties.Redis redis = properties.getRedis();
        if (redis.getKeyPrefix() != null) {
            builder.keyPrefix(redis.getKeyPrefix());
        }
        if (redis.getOwnerLabel() != null) {
            builder.ownerLabel(redis.getOwnerLabel());
        }
        TokenIssuer issuer = issuer(properties);
        if (issuer == TokenIssuer.EPOCHS && floor.getIfAvailable() != null) {
            throw new IllegalStateException("fenced.tokens=epochs replaces the fence floor: remove fenced.floor.* (or the FenceFloor bean)");
        }
        builder.tokens(issuer.policy(floor::getIfAvailable, () -> required(epochs, issuer), () -> required(tokens, issuer)));
        return builder.observer(FencedAutoConfiguration.observers(observer));
    }

    private static TokenIssuer issuer(FencedProperties properties) {
        try {
            return TokenIssuer.ofSetting(properties.getTokens());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("fenced.tokens " + e.getMessage(), e);
        }
    }

    private static <T> T required(ObjectProvider<T> source, TokenIssuer issuer) {
        T found = source.getIfAvailable();
        if (found == null) {
            throw new IllegalStateException("fenced.tokens=" + issuer.setting() + " needs a DataSource (or a "
                    + (issuer == TokenIssuer.EPOCHS ? "EpochSource" : "TokenSource") + " bean)");
        }
        return found;
    }
}
