package dev.fenced.redis;

/**
 * The Lua scripts, kept as constants so their text and the reason for each stay together. Every
 * key comes in through KEYS[], as {@link RedisKeys} spells it, never built inside a script: Redis
 * Cluster routes a script by the keys it declares, and a key prefix must reach every key.
 */
final class RedisScripts {
    static final long HELD = 0;
    static final long COUNTER_LOST = -1;
    static final long NEED_FLOOR = -2;

    private RedisScripts() {
    }

    /**
     * Lease and token in one atomic round trip. The article takes them in two steps (SET NX PX,
     * then INCR): a crash between them leaves a lease without a token, and the second step costs
     * a round trip. Both keys carry the same {resource} hash tag ({@link RedisKeys}), so this is
     * valid on a cluster. The usual path is those two commands and nothing else, so the script
     * costs Redis about what the two steps do; the checks below run only when the counter is
     * missing or behind.
     *
     * <p>The counter must never go backwards. When it is missing, or lower than a token this
     * client has already seen, the script raises it to the floor it was given; without a floor
     * it asks for one (-2) or reports the loss (-1), and takes no lease.
     *
     * <pre>
     * KEYS[1] lock key         ARGV[1] owner id      ARGV[2] ttl in ms
     * KEYS[2] fence key        ARGV[3] floor or ''   ARGV[4] '1' if the caller has a floor source
     *                          ARGV[5] highest token this caller has seen for the resource
     * returns the token (from 1) granted | 0 held | -1 counter lost | -2 need a floor; one integer,
     * which the client reads without decoding a list
     * </pre>
     */
    static final String ACQUIRE = """
            if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
              return 0
            end
            local token = redis.call('INCR', KEYS[2])
            local seen = tonumber(ARGV[5])
            if token > 1 and token > seen then
              return token
            end
            -- INCR found no counter (token 1: a stored counter is never 0) or one behind a token
            -- already seen. Repair it from the floor, or undo both writes and say why.
            if ARGV[3] ~= '' then
              local floor = math.max(tonumber(ARGV[3]), seen, token - 1)
              redis.call('SET', KEYS[2], string.format('%.0f', floor + 1))
              return floor + 1
            end
            if token == 1 and ARGV[4] ~= '1' and seen == 0 then
              return 1
            end
            redis.call('DEL', KEYS[1])
            if token == 1 then
              redis.call('DEL', KEYS[2])
            else
              redis.call('DECR', KEYS[2])
            end
            if ARGV[4] == '1' then
              return -2
            end
            return -1
            """;

    /** SET NX PX alone, for when tokens come from a durable {@code TokenSource}. */
    static final String ACQUIRE_LEASE_ONLY = """
            if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
              return 1
            end
            return 0
            """;

    /** Compare-and-delete: a stale holder's release must not delete the next holder's lease. */
    static final String RELEASE = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              return redis.call('DEL', KEYS[1])
            end
            return 0
            """;

    /** Compare-and-extend: a stale holder must not extend the next holder's lease. */
    static final String RENEW = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              return redis.call('PEXPIRE', KEYS[1], ARGV[2])
            end
            return 0
            """;

    /**
     * Raises the counter to at least ARGV[1]; never lowers it. Returns the counter as it was
     * before, so that the caller can tell a raise (worth a log line and a metric) from a no-op.
     */
    static final String RAISE_COUNTER = """
            local counter = tonumber(redis.call('GET', KEYS[1]) or '0')
            if counter < tonumber(ARGV[1]) then
              redis.call('SET', KEYS[1], ARGV[1])
            end
            return counter
            """;
}
