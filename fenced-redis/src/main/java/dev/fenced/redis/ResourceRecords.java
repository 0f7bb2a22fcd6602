package dev.fenced.redis;

import java.time.Duration;

/**
 * Reads and deletes everything a store keeps for a resource under its key layout, whatever policy
 * issued the tokens: for status tools, and for starting a resource over. Reads are a snapshot, never
 * a basis for a decision to write.
 */
final class ResourceRecords {
    private ResourceRecords() {
    }

    /** See {@link RedisLeaseStore#inspect}. */
    static LeaseSnapshot inspect(RedisCalls calls, RedisKeys keys, String resource) {
        String lockKey = keys.lockKey(resource);
        String fenceKey = keys.fenceKey(resource);
        String issuerKey = keys.issuerKey(resource);
        String epochKey = keys.epochKey(resource);
        return calls.call(redis -> {
            String holder = redis.get(lockKey);
            long pttl = redis.pttl(lockKey);
            String counter = redis.get(fenceKey);
            String recorded = redis.get(issuerKey);
            String epoch = redis.get(epochKey);
            return new LeaseSnapshot(resource, holder, holder == null ? Duration.ZERO : Duration.ofMillis(Math.max(0, pttl)),
                    counter == null ? null : Long.valueOf(counter), recorded, highestTokenIssued(recorded, counter, epoch));
        });
    }

    /** See {@link RedisLeaseStore#forget}. */
    static boolean forget(RedisCalls calls, RedisKeys keys, String resource) {
        String[] all = {keys.lockKey(resource), keys.fenceKey(resource), keys.epochKey(resource), keys.issuerKey(resource),
            keys.epochTicketKey(resource)};
        return calls.call(redis -> redis.del(all)) > 0;
    }

    /** What Redis shows of the tokens a resource's recorded issuer handed out; see {@link LeaseSnapshot#highestTokenIssued()}. */
    private static long highestTokenIssued(String recorded, String counter, String epoch) {
        long count = counter == null ? 0 : Long.parseLong(counter);
        if (TokenIssuer.SOURCE.recorded().equals(recorded)) {
            return 0L;
        }
        if (epoch != null) {
            long inEpoch = Long.parseLong(epoch.substring(0, epoch.indexOf(':'))) << TokenEpochs.EPOCH_SHIFT;
            return Math.max(inEpoch | Math.min(count, (1L << TokenEpochs.EPOCH_SHIFT) - 1), count);
        }
        return count;
    }
}
