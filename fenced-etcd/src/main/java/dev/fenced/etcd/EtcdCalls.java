package dev.fenced.etcd;

import dev.fenced.StoreUnavailableException;
import dev.fenced.internal.Durations;
import dev.fenced.internal.Redaction;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Waits on jetcd's futures, each for at most the request timeout, and turns what goes wrong into
 * {@link StoreUnavailableException}s that say what waited on what, naming the endpoints but never a
 * password: jetcd retries an unreachable member on its own and would otherwise wait as long as it likes.
 */
final class EtcdCalls {
    private final String server;
    private final Set<Redaction.Secret> secrets;
    private final Duration timeout;

    EtcdCalls(String server, Set<Redaction.Secret> secrets, Duration timeout) {
        this.server = server;
        this.secrets = secrets;
        this.timeout = timeout;
    }

    Duration timeout() {
        return timeout;
    }

    String server() {
        return server;
    }

    /**
     * The future's value. {@code who} is the caller's operation ({@code tryAcquire(r)}), {@code what}
     * the etcd call it waited for ({@code "the acquire transaction"}).
     */
    <T> T await(CompletableFuture<T> future, String who, String what) {
        try {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new StoreUnavailableException(who + " waited " + Durations.human(timeout) + " on etcd at " + server + " for "
                    + what + " and gave up (the store's request timeout)", e);
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException(who + " was interrupted waiting on etcd at " + server + " for " + what, e);
        } catch (ExecutionException e) {
            throw failed(e.getCause(), who, what);
        }
    }

    /** True when etcd answered that a lease it was asked about does not exist (it expired or was revoked). */
    static boolean isLeaseNotFound(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains("requested lease not found")) {
                return true;
            }
        }
        return false;
    }

    StoreUnavailableException failed(Throwable cause, String who, String what) {
        Throwable unwrapped = cause instanceof CompletionException && cause.getCause() != null ? cause.getCause() : cause;
        return new StoreUnavailableException(who + ": etcd at " + server + " failed " + what + ": " + reason(unwrapped), unwrapped);
    }

    private String reason(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message;
        if (root instanceof StatusRuntimeException status) {
            Status s = status.getStatus();
            message = s.getCode() + (s.getDescription() == null ? "" : ": " + s.getDescription());
        } else {
            message = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        }
        return Redaction.scrub(Redaction.redactUri(message), secrets);
    }
}
