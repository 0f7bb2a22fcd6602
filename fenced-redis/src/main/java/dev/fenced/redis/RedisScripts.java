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
    /** The resource's tokens come from another issuer (see {@link RedisKeys#issuerKey}); nothing was taken. */
    static final long OTHER_ISSUER = -3;

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
     * <p>Tokens of different issuers do not order (a counter at 2 beside fences of epoch tokens in
     * the millions), so the first grant records the issuer and every later one checks it (-3, no
     * lease taken).
     *
     * <pre>
     * KEYS[1] lock key         ARGV[1] owner id      ARGV[2] ttl in ms
     * KEYS[2] fence key        ARGV[3] floor or ''   ARGV[4] '1' if the caller has a floor source
     * KEYS[3] issuer key       ARGV[5] highest token this caller has seen for the resource
     *                          ARGV[6] this store's issuer, 'redis'
     * returns the token (from 1) granted | 0 held | -1 counter lost | -2 need a floor | -3 another
     * issuer; one integer, which the client reads without decoding a list
     * </pre>
     */
    static final String ACQUIRE = """
            local issuer = redis.call('GET', KEYS[3])
            if issuer and issuer ~= ARGV[6] then
              return -3
            end
            if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
              return 0
            end
            if not issuer then
              redis.call('SET', KEYS[3], ARGV[6])
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

    /**
     * Lease and token in one round trip, the token in an epoch drawn from a durable source
     * ({@link TokenPolicy#epochs}). Tokens are (epoch, counter), the counter in
     * the low 24 bits, so every token of a new epoch is above every token of an older one.
     *
     * <p>The epoch key holds "epoch:server", the server being the run_id of the redis-server
     * process and the replication id of the history of writes it serves, as they were when the
     * epoch began. A restart changes the run_id; a promotion (a failover to a replica, however far
     * behind, in a Sentinel group or a Cluster) changes the replication id, also when a node that
     * was primary before is promoted again after resyncing an older copy; a resharding moves the
     * keys to another process; a FLUSHALL or an eviction removes the epoch key or the counter. Each
     * may have lost tokens already handed out, so each makes the script refuse (-1, no lease taken)
     * and name the server it runs on, until the caller brings a new epoch drawn for that very
     * server: an epoch drawn before a failover is not installed after it. The counter starts over
     * under the new epoch, above everything issued before. INFO is allowed in scripts (Redis 5 and
     * later replicate a script's effects, not the script) and answers from memory; it is read on
     * every call because a failover gives no other sign inside Redis.
     *
     * <p>An epoch is installed only with the draw ticket of the refusal it was drawn after (KEYS[5],
     * made by the first refusal and consumed by the install, expiring after a minute), so that an
     * epoch drawn before a loss is never installed after it: a client that drew epoch 24, paused,
     * and came back after another had installed epoch 30 and Redis had then lost it (FLUSHALL, the
     * counter gone) would otherwise install 24 on the emptied server and issue tokens below 30's.
     * The loss took the ticket with it; the stale client is refused and draws again, above 30. Every
     * install happens after its ticket was made, every draw for it after that, and every earlier
     * install either consumed an earlier ticket or lost it: installed epochs rise on one server.
     *
     * <p>The issuer is checked first, as in {@link #ACQUIRE}.
     *
     * <pre>
     * KEYS[1] lock key       ARGV[1] owner id      ARGV[2] ttl in ms
     * KEYS[2] counter key    ARGV[3] a new epoch from the durable source, or ''
     * KEYS[3] epoch key      ARGV[4] the server ARGV[3] was drawn for, as the last refusal named it
     * KEYS[4] issuer key     ARGV[5] this store's issuer, 'epochs'
     * KEYS[5] ticket key     ARGV[6] the ticket the last refusal named, or ''
     *                        ARGV[7] a fresh random ticket, made the ticket when there is none
     * returns {counter, epoch, '', ''} granted | {0, 0, '', ''} held
     *     | {-1, epoch held or 0, server, ticket} draw a new epoch | {-3, 0, recorded issuer, ''} another issuer
     * </pre>
     */
    static final String ACQUIRE_IN_EPOCH = """
            local issuer = redis.call('GET', KEYS[4])
            if issuer and issuer ~= ARGV[5] then
              return {-3, 0, issuer, ''}
            end
            local info = redis.pcall('INFO', 'server', 'replication')
            if type(info) ~= 'string' then
              -- Redis before 7 reads one section at a time.
              info = redis.call('INFO', 'server') .. redis.call('INFO', 'replication')
            end
            local server = string.match(info, 'run_id:(%x+)') .. '/' .. string.match(info, 'master_replid:(%x+)')
            local function drawAgain(epoch)
              redis.call('SET', KEYS[5], ARGV[7], 'NX', 'PX', 60000)
              return {-1, epoch, server, redis.call('GET', KEYS[5])}
            end
            if ARGV[3] ~= '' and ARGV[4] == server and redis.call('GET', KEYS[5]) == ARGV[6] then
              redis.call('DEL', KEYS[5])
              local now = redis.call('GET', KEYS[3])
              if not now or tonumber(ARGV[3]) > tonumber(string.match(now, '^(%d+)')) then
                redis.call('SET', KEYS[3], ARGV[3] .. ':' .. server)
                redis.call('SET', KEYS[2], '0')
              end
            end
            local held = redis.call('GET', KEYS[3])
            if not held then
              return drawAgain(0)
            end
            local epoch, since = string.match(held, '^(%d+):(.+)$')
            if since ~= server or redis.call('EXISTS', KEYS[2]) == 0 then
              return drawAgain(tonumber(epoch))
            end
            if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
              return {0, 0, '', ''}
            end
            local counter = redis.call('INCR', KEYS[2])
            if counter > 16777215 then
              -- The epoch's 24 bits are spent: a new epoch, rather than a token that overflows into it.
              redis.call('DEL', KEYS[1])
              return drawAgain(tonumber(epoch))
            end
            if not issuer then
              redis.call('SET', KEYS[4], ARGV[5])
            end
            return {counter, tonumber(epoch), '', ''}
            """;

    /**
     * The epoch form of {@link #RAISE_COUNTER}: raises the counter to ARGV[2] only while the epoch
     * key still holds epoch ARGV[1] and the counter exists. A missing counter is not recreated (the
     * tokens it issued after the stored fence would come again): the epoch key is dropped, and so
     * is one behind a fence of a later epoch, so that the next acquisition draws a new epoch.
     * Returns the counter as it was, or -1 when nothing was raised.
     */
    static final String RAISE_IN_EPOCH = """
            local held = redis.call('GET', KEYS[2])
            local epoch = held and tonumber(string.match(held, '^(%d+)')) or 0
            local fenceEpoch = tonumber(ARGV[1])
            local counter = redis.call('GET', KEYS[1])
            if fenceEpoch > epoch or not counter then
              redis.call('DEL', KEYS[2])
              return -1
            end
            if fenceEpoch < epoch then
              return -1
            end
            if tonumber(counter) < tonumber(ARGV[2]) then
              redis.call('SET', KEYS[1], ARGV[2])
            end
            return tonumber(counter)
            """;

    /**
     * SET NX PX alone, for when tokens come from a durable {@code TokenSource}; the issuer is
     * checked as in {@link #ACQUIRE}.
     *
     * <pre>
     * KEYS[1] lock key     ARGV[1] owner id   ARGV[2] ttl in ms
     * KEYS[2] issuer key   ARGV[3] this store's issuer, 'source'
     * returns 1 granted | 0 held | -3 another issuer
     * </pre>
     */
    static final String ACQUIRE_LEASE_ONLY = """
            local issuer = redis.call('GET', KEYS[2])
            if issuer and issuer ~= ARGV[3] then
              return -3
            end
            if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
              return 0
            end
            if not issuer then
              redis.call('SET', KEYS[2], ARGV[3])
            end
            return 1
            """;

    /**
     * Hands a resource's tokens to another issuer, only while no lease is live (a holder of the
     * old issuer could otherwise go on next to one of the new): records the issuer and leaves the
     * counter where the new issuer starts, ARGV[2] for Redis's own counter (the next INCR is above
     * every token issued before), or no counter and no epoch for epochs (the next acquisition draws
     * an epoch) and a durable source (which needs none).
     *
     * <pre>
     * KEYS[1] lock key   KEYS[2] counter key   KEYS[3] epoch key   KEYS[4] issuer key   KEYS[5] epoch ticket key
     * ARGV[1] the new issuer   ARGV[2] the counter to set, or ''
     * returns 1 switched | 0 a lease is live
     * </pre>
     */
    static final String SWITCH_ISSUER = """
            if redis.call('EXISTS', KEYS[1]) == 1 then
              return 0
            end
            redis.call('SET', KEYS[4], ARGV[1])
            redis.call('DEL', KEYS[3], KEYS[5])
            if ARGV[2] ~= '' then
              redis.call('SET', KEYS[2], ARGV[2])
            else
              redis.call('DEL', KEYS[2])
            end
            return 1
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
     * Raises an existing counter to at least ARGV[1]; never lowers it, and never recreates a
     * missing one: a counter rebuilt from a stored fence would hand out again the tokens issued
     * above that fence (tokens 1 to 5 issued, a row at fence 3, the counter recreated at 3: the
     * next token is 4). A missing counter stays missing, so the next acquisition reseeds it above
     * the floor, with its margin, or reports the loss ({@link #ACQUIRE}). With ARGV[2] = '1' a
     * missing counter is created, but only for a resource with nothing recorded (no issuer, no
     * epoch): one that never issued a token, as far as Redis can tell; the caller adds what it saw
     * itself. Returns the counter as it was before (0 for one created), so that the caller can
     * tell a raise from a no-op, or -1 when it is missing and was left so.
     *
     * <pre>
     * KEYS[1] counter key   KEYS[2] epoch key   KEYS[3] issuer key
     * ARGV[1] the value to raise to   ARGV[2] '1' to create a counter for a resource with nothing recorded
     * </pre>
     */
    static final String RAISE_COUNTER = """
            local counter = redis.call('GET', KEYS[1])
            if not counter then
              if ARGV[2] ~= '1' or redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then
                return -1
              end
              counter = '0'
            end
            counter = tonumber(counter)
            if counter < tonumber(ARGV[1]) then
              redis.call('SET', KEYS[1], ARGV[1])
            end
            return counter
            """;
}
