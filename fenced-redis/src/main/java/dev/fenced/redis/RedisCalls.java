package dev.fenced.redis;

import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The commands a store sends on its one connection, each failure turned into a
 * {@link dev.fenced.StoreUnavailableException} by {@link RedisErrors}. Thread-safe as the
 * connection is.
 */
final class RedisCalls {
    private static final Map<String, String> SHA1 = new ConcurrentHashMap<>();
    private static final Logger LOG = LoggerFactory.getLogger(RedisCalls.class);

    private final RedisClusterCommands<String, String> commands;
    private final RedisErrors errors;
    private final boolean reconnectOffReplica;

    /**
     * @param reconnectOffReplica whether a READONLY answer drops the connection, so that the client
     *     connects again (through a Sentinel, to the primary it names then): only for a connection
     *     of the store's own to one server; a cluster client follows its topology instead
     */
    RedisCalls(RedisClusterCommands<String, String> commands, RedisErrors errors, boolean reconnectOffReplica) {
        this.commands = commands;
        this.errors = errors;
        this.reconnectOffReplica = reconnectOffReplica;
    }

    /**
     * Runs one of {@link RedisScripts}, all of which answer one integer: by EVALSHA, falling back
     * to EVAL (which reloads the script) after a restart or SCRIPT FLUSH emptied the cache.
     */
    long script(String script, String[] keys, String... args) {
        Long reply = call(redis -> {
            try {
                return redis.<Long>evalsha(sha1(script), ScriptOutputType.INTEGER, keys, args);
            } catch (RedisNoScriptException e) {
                return redis.<Long>eval(script, ScriptOutputType.INTEGER, keys, args);
            }
        });
        return Objects.requireNonNull(reply, "script reply");
    }

    /** Runs one of {@link RedisScripts} that answers a list (integers as Long, strings as String). */
    List<Object> scriptList(String script, String[] keys, String... args) {
        List<Object> reply = call(redis -> {
            try {
                return redis.<List<Object>>evalsha(sha1(script), ScriptOutputType.MULTI, keys, args);
            } catch (RedisNoScriptException e) {
                return redis.<List<Object>>eval(script, ScriptOutputType.MULTI, keys, args);
            }
        });
        return Objects.requireNonNull(reply, "script reply");
    }

    /** Any other command or commands. */
    <T> T call(Function<RedisClusterCommands<String, String>, T> command) {
        try {
            return command.apply(commands);
        } catch (RedisException e) {
            if (reconnectOffReplica && answeredByReplica(e)) {
                dropConnection(e);
            }
            throw errors.unavailable(e);
        }
    }

    /** READONLY, alone or inside a script's error: the server is a replica, so the write was not made. */
    private static boolean answeredByReplica(RedisException e) {
        return e instanceof RedisCommandExecutionException && e.getMessage() != null && e.getMessage().contains("READONLY");
    }

    /**
     * Closes this connection from the server's side (CLIENT KILL of itself), so that Lettuce
     * connects again. A client that looked the primary up through a Sentinel and connected after a
     * pause (a GC, a SIGSTOP) can reach a node that was demoted meanwhile, or an old primary the
     * operator brought back as a replica; the Sentinel kills the clients of the nodes it demotes
     * itself, but of no other, and Lettuce does not connect again on READONLY. Left alone, every
     * acquisition on this connection would fail until the process restarts. ROLE is asked first:
     * several threads answered READONLY at once send their drops one after another, and those
     * queued behind the first run on the new connection, which they must not drop.
     */
    private void dropConnection(RedisException cause) {
        try {
            if ("master".equals(String.valueOf(commands.role().get(0)))) {
                return; // connected again already
            }
            commands.clientKill(KillArgs.Builder.id(commands.clientId()).skipme(false));
            LOG.warn("Redis at {} answered as a replica (READONLY); this store's connection was dropped and connects again,"
                    + " through the Sentinel if the URL names one", errors.server());
        } catch (RedisException e) {
            cause.addSuppressed(e);
            LOG.warn("Redis at {} answered as a replica (READONLY) and this store's connection could not be dropped ({}); it"
                    + " stays on the replica until it is closed or the server is a primary again; a Redis user with ACLs needs"
                    + " +role +client|id +client|kill", errors.server(), e.getMessage());
        }
    }

    /** Checks that Redis answers; returns how long the round trip took. */
    Duration ping() {
        long started = System.nanoTime();
        call(redis -> redis.ping());
        return Duration.ofNanos(System.nanoTime() - started);
    }

    /** The server's version (INFO server, {@code redis_version}); "unknown" if it says none. */
    String serverVersion() {
        String info = call(redis -> redis.info("server"));
        return info.lines().filter(line -> line.startsWith("redis_version:")).map(line -> line.substring("redis_version:".length()).trim())
                .findFirst().orElse("unknown");
    }

    /** The SHA-1 by which EVALSHA names a script; computed once per script. */
    static String sha1(String script) {
        return SHA1.computeIfAbsent(script, text -> {
            try {
                byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
                return HexFormat.of().formatHex(digest);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-1 is required by every JVM", e);
            }
        });
    }
}
