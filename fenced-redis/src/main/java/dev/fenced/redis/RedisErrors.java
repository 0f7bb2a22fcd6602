package dev.fenced.redis;

import dev.fenced.StoreUnavailableException;
import dev.fenced.internal.Redaction;
import io.lettuce.core.RedisException;
import java.util.Locale;
import java.util.Set;

/**
 * Turns Lettuce's failures into the store's exceptions, naming the server but never its secrets:
 * Lettuce's messages can quote the URL it was given, password and all.
 */
final class RedisErrors {
    private final String server;
    private final Set<Redaction.Secret> secrets;

    private RedisErrors(String server, Set<Redaction.Secret> secrets) {
        this.server = server;
        this.secrets = secrets;
    }

    /** For a store that connects to {@code uri} itself. */
    static RedisErrors forUri(String uri) {
        return new RedisErrors(Redaction.describe(uri), Redaction.secretsOf(uri));
    }

    /** For a store on the caller's connection, whose URL (and so whose secrets) it never sees. */
    static RedisErrors forCallersConnection() {
        return new RedisErrors("(the caller's connection)", Set.of());
    }

    /** The server as messages may name it: the URL without user-info, query or fragment. */
    String server() {
        return server;
    }

    /** A command failed. */
    StoreUnavailableException unavailable(RedisException e) {
        return translate(e, "did not answer");
    }

    /** The first connection failed. */
    StoreUnavailableException unreachable(RedisException e) {
        return translate(e, "is unreachable");
    }

    private StoreUnavailableException translate(RedisException e, String what) {
        String reason = rootMessage(e);
        if (isTlsFailure(e)) {
            return new StoreTlsException("TLS with Redis at " + server + " failed: " + reason, e);
        }
        if (isAuthFailure(reason)) {
            return new StoreAuthenticationException("Redis at " + server + " refused the credentials: " + reason, e);
        }
        return new StoreUnavailableException("Redis at " + server + " " + what + ": " + reason, e);
    }

    private static boolean isTlsFailure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof javax.net.ssl.SSLException || t instanceof java.security.GeneralSecurityException) {
                return true;
            }
        }
        return false;
    }

    private static boolean isAuthFailure(String reason) {
        String upper = reason.toUpperCase(Locale.ROOT);
        return upper.contains("WRONGPASS") || upper.contains("NOAUTH") || upper.contains("INVALID PASSWORD")
                || upper.contains("INVALID USERNAME-PASSWORD");
    }

    private String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        return Redaction.scrub(Redaction.redactUri(message), secrets);
    }
}
