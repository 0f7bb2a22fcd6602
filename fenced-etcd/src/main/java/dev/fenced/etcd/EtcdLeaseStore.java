package dev.fenced.etcd;

import dev.fenced.FencedObserver;
import dev.fenced.FencedObserver.AcquireOutcome;
import dev.fenced.Lease;
import dev.fenced.LeaseArguments;
import dev.fenced.LeaseStore;
import dev.fenced.StoreUnavailableException;
import dev.fenced.LeaseView;
import dev.fenced.LogKeys;
import dev.fenced.internal.Durations;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * A {@link LeaseStore} on etcd: a resource's lease is the key {@code <prefix>lease/<resource>},
 * holding the owner id and attached to an etcd lease with the TTL, written in a transaction only if
 * absent; its token is the revision of that write, from etcd's consensus log, plus the resource's
 * offset ({@code <prefix>offset/<resource>}, 0 until {@link #observeStoredFence} raises it).
 *
 * <p>Guarantees: tokens for a resource strictly increase in grant order and never repeat, across
 * restarts and leader changes of the cluster, with nothing to configure: etcd's revision only
 * grows and every grant is a write through the log, so no member serves an old one. While a lease
 * is live no other is granted for the resource. A lease lasts at least the TTL asked for:
 * etcd counts TTLs in whole seconds and has a minimum (1.5 election timeouts: 2 s with etcd's
 * defaults), so a TTL is rounded up to whole seconds, and up again to the server's minimum.
 * Does not guarantee: mutual exclusion of writes (etcd's own docs say so of its locks; the token
 * checked by the database does that); that a lease ends the instant its TTL is out (etcd's leader
 * revokes it on its next check, up to half a second later, and a new leader restarts the TTLs it
 * inherits, so a leader change lengthens leases); that a revision fits an application's older
 * fences, for which {@link #observeStoredFence} raises the offset; tokens across a restore of etcd
 * from a backup, or a deleted offset key: the revision (or offset) is then the backup's, and tokens
 * issued since are issued again until a refused write's {@link #observeStoredFence} raises the offset.
 *
 * <p>Thread-safe; one jetcd client is shared by all callers: the store's own, closed by
 * {@link #close()}, or the caller's ({@link #builder(Client)}), left open. Every call waits at most
 * the {@link Builder#requestTimeout request timeout}.
 */
public final class EtcdLeaseStore implements LeaseStore, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EtcdLeaseStore.class);
    static final String DEFAULT_PREFIX = "fenced/";
    private static final int TOKENS_REMEMBERED = 10_000;

    private final Client client;
    private final boolean ownsClient;
    private final EtcdCalls calls;
    private final String prefix;
    private final String ownerLabel;
    private final FencedObserver observer;
    /** Revocations sent and not yet answered, for {@link #close()} to wait for. */
    private final Set<CompletableFuture<?>> revoking = ConcurrentHashMap.newKeySet();
    /** The highest token this store granted per resource, for {@link #view} once the lease key is gone. Bounded. */
    private final Map<String, Long> highestSeen = Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > TOKENS_REMEMBERED;
        }
    });

    private EtcdLeaseStore(Builder builder) {
        this.prefix = builder.prefix;
        this.ownerLabel = builder.ownerLabel;
        this.observer = builder.observer;
        if (builder.client != null) {
            this.client = builder.client;
            this.ownsClient = false;
            this.calls = new EtcdCalls("(the caller's client)", Set.of(), builder.requestTimeout);
        } else {
            EtcdEndpoints endpoints = builder.endpoints;
            ClientBuilder clientBuilder = Client.builder().endpoints(endpoints.uris())
                    .connectTimeout(builder.requestTimeout)
                    // jetcd retries an unavailable member by itself; past our bound nobody waits for the answer.
                    .retryMaxDuration(builder.requestTimeout);
            if (endpoints.user() != null) {
                clientBuilder.user(bytes(endpoints.user())).password(bytes(endpoints.password()));
            }
            this.client = clientBuilder.build();
            this.ownsClient = true;
            this.calls = new EtcdCalls(endpoints.described(), endpoints.secrets(), builder.requestTimeout);
        }
    }

    /**
     * Starts a builder for the etcd cluster at {@code endpoints}: {@code http://host:port}, several
     * comma-separated, with {@code user:password@} when etcd's auth is on. The store connects on
     * first use; an unreachable cluster is a {@link dev.fenced.StoreUnavailableException} then.
     *
     * @throws IllegalArgumentException for a blank list or an entry that is not {@code http://host:port}
     */
    public static Builder builder(String endpoints) {
        return new Builder(EtcdEndpoints.parse(endpoints), null);
    }

    /** Starts a builder for a store on the caller's jetcd client, which {@link #close()} leaves open. */
    public static Builder builder(Client client) {
        return new Builder(null, Objects.requireNonNull(client, "client"));
    }

    /**
     * Rounds a TTL up to the whole seconds etcd counts in: 1 ms and 1 s give 1 s, 1001 ms gives
     * 2 s. The server may raise it again to its minimum.
     */
    public static long ttlSeconds(Duration ttl) {
        long millis = LeaseArguments.requireValidTtl(ttl).toMillis();
        return Math.max(1, (millis + 999) / 1000);
    }

    /** The key that holds a resource's lease: {@code <prefix>lease/<resource>}. */
    public String leaseKey(String resource) {
        return prefix + "lease/" + LeaseArguments.requireValidResource(resource);
    }

    /** The key that holds a resource's token offset: {@code <prefix>offset/<resource>}, absent until raised. */
    public String offsetKey(String resource) {
        return prefix + "offset/" + LeaseArguments.requireValidResource(resource);
    }

    @Override
    public Optional<Lease> tryAcquire(String resource, Duration ttl) {
        LeaseArguments.requireValidResource(resource);
        long seconds = ttlSeconds(ttl);
        long started = System.nanoTime();
        String who = "tryAcquire(" + resource + ")";
        try {
            ByteSequence lockKey = bytes(leaseKey(resource));
            // A look before the grant: a busy resource costs one read instead of a lease granted and revoked.
            GetResponse current = calls.await(client.getKVClient().get(lockKey, GetOption.builder().withCountOnly(true).build()), who,
                    "a look at the lease key");
            if (current.getCount() > 0) {
                observer.acquired(resource, AcquireOutcome.BUSY, 0, took(started));
                return Optional.empty();
            }
            LeaseGrantResponse grant = calls.await(client.getLeaseClient().grant(seconds), who, "a grant of an etcd lease of " + seconds + " s");
            String ownerId = newOwnerId();
            TxnResponse txn;
            try {
                txn = calls.await(client.getKVClient().txn()
                        .If(new Cmp(lockKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(Op.put(lockKey, bytes(ownerId), PutOption.builder().withLeaseId(grant.getID()).build()),
                                Op.get(bytes(offsetKey(resource)), GetOption.DEFAULT))
                        .commit(), who, "the acquire transaction");
            } catch (RuntimeException e) {
                // The transaction may have gone through all the same: revoking the lease deletes the key with it.
                revokeQuietly(grant.getID());
                throw e;
            }
            if (!txn.isSucceeded()) {
                revokeQuietly(grant.getID());
                observer.acquired(resource, AcquireOutcome.BUSY, 0, took(started));
                return Optional.empty();
            }
            long revision = txn.getHeader().getRevision(); // the put's: the one write of the transaction
            long token;
            try {
                token = offsetIn(txn.getGetResponses().get(0)) + revision;
            } catch (RuntimeException e) {
                revokeQuietly(grant.getID()); // an offset key nobody can read: let go of the key now, not after its TTL
                throw e;
            }
            highestSeen.merge(resource, token, Math::max);
            observer.acquired(resource, AcquireOutcome.GRANTED, token, took(started));
            return Optional.of(new EtcdLease(this, resource, token, revision, ownerId, grant.getID(), seconds, grant.getTTL()));
        } catch (RuntimeException e) {
            observer.acquired(resource, AcquireOutcome.ERROR, 0, took(started));
            throw e;
        }
    }

    /**
     * Raises the resource's offset so that every later token is above {@code storedFence}: tokens
     * are offset plus revision, and a fence written by an earlier issuer (a Redis counter at a
     * million) can be above etcd's revision, which would have every token refused. The offset is
     * set, by a compare-and-put, to the fence less the revision of that put at the least (the one
     * after the revision it was read at), and only ever raised: the next grant's revision is above
     * the put's, so its token is above the fence (just above it when nothing else wrote between),
     * and tokens stay strictly increasing.
     */
    /** How many times a raise of the offset reads again after losing to another raise before it gives up. */
    private static final int MAX_OFFSET_RAISES = 100;

    @Override
    public void observeStoredFence(String resource, long storedFence) {
        LeaseArguments.requireValidResource(resource);
        String who = "observeStoredFence(" + resource + ", " + storedFence + ")";
        ByteSequence key = bytes(offsetKey(resource));
        for (int attempt = 1; ; attempt++) {
            if (attempt > MAX_OFFSET_RAISES) {
                throw new StoreUnavailableException(who + " lost the compare-and-put of the offset " + MAX_OFFSET_RAISES
                        + " times to other raises; nothing lowered, try again", null);
            }
            GetResponse read = calls.await(client.getKVClient().get(key), who, "a read of the offset");
            long offset = read.getKvs().isEmpty() ? 0 : offsetIn(read);
            long revision = read.getHeader().getRevision();
            if (offset + revision >= storedFence) {
                return; // the next grant's revision is above this one: its token is above the fence already
            }
            long raised = storedFence - (revision + 1); // the put lands at revision + 1 or later
            long seenModRevision = read.getKvs().isEmpty() ? 0 : read.getKvs().get(0).getModRevision();
            TxnResponse txn = calls.await(client.getKVClient().txn()
                    .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(seenModRevision)))
                    .Then(Op.put(key, bytes(Long.toString(raised)), PutOption.DEFAULT))
                    .commit(), who, "the compare-and-put of the offset");
            if (txn.isSucceeded()) {
                try (MDC.MDCCloseable r = MDC.putCloseable(LogKeys.RESOURCE, resource)) {
                    LOG.warn("tokens of {} were behind a stored fence (offset {} at revision {}, fence {}); offset raised to {}", resource,
                            offset, revision, storedFence, raised);
                }
                observer.counterRaised(resource, storedFence);
                return;
            }
            // Another process raised it (or is raising it) at the same time: read again, never lower theirs.
        }
    }

    /**
     * What etcd holds for the resource: the holder, the time its etcd lease has left in whole
     * seconds, rounded up (etcd reports no finer), and the highest token: the
     * live lease's when there is one, otherwise the highest this store granted (0 when it granted none).
     */
    @Override
    public LeaseView view(String resource) {
        LeaseArguments.requireValidResource(resource);
        String who = "view(" + resource + ")";
        TxnResponse read = calls.await(client.getKVClient().txn()
                .Then(Op.get(bytes(leaseKey(resource)), GetOption.DEFAULT), Op.get(bytes(offsetKey(resource)), GetOption.DEFAULT))
                .commit(), who, "a read of the lease and offset keys");
        GetResponse lock = read.getGetResponses().get(0);
        GetResponse offset = read.getGetResponses().get(1);
        long seen = highestSeen.getOrDefault(resource, 0L);
        if (lock.getKvs().isEmpty()) {
            return new LeaseView(resource, null, Duration.ZERO, seen);
        }
        KeyValue held = lock.getKvs().get(0);
        // The live lease's token is exact unless the offset was raised after its grant; then only what this store saw.
        boolean offsetUnchanged = offset.getKvs().isEmpty() || offset.getKvs().get(0).getModRevision() < held.getCreateRevision();
        long highest = Math.max(seen, offsetUnchanged ? offsetIn(offset) + held.getCreateRevision() : 0);
        LeaseTimeToLiveResponse ttl = calls.await(client.getLeaseClient().timeToLive(held.getLease(), LeaseOption.DEFAULT), who,
                "the time left of etcd lease " + Long.toHexString(held.getLease()));
        if (ttl.getTTL() < 0) {
            return new LeaseView(resource, null, Duration.ZERO, highest); // expired between the two reads
        }
        // etcd truncates to whole seconds: 0 for a lease in its last second. Rounded up, a live lease never shows zero.
        long left = Math.min(ttl.getTTL() + 1, Math.max(ttl.getGrantedTTL(), 1));
        return new LeaseView(resource, held.getValue().toString(StandardCharsets.UTF_8), Duration.ofSeconds(left), highest);
    }

    /**
     * Closes the store's own client, after the revocations still on their way (at most the request
     * timeout); a client the caller passed in stays open.
     */
    @Override
    public void close() {
        try {
            CompletableFuture.allOf(revoking.toArray(CompletableFuture[]::new)).get(calls.timeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // a lease not revoked ends by its TTL
        }
        if (ownsClient) {
            client.close();
        }
    }

    @Override
    public String toString() {
        return "EtcdLeaseStore[" + calls.server() + ", key prefix " + prefix + "]";
    }

    Client client() {
        return client;
    }

    EtcdCalls calls() {
        return calls;
    }

    FencedObserver observer() {
        return observer;
    }

    /**
     * Revokes an etcd lease without waiting for the answer: a lease that holds no key of a live
     * holder's any more, whose revocation only frees etcd's memory sooner. Should it fail, the lease
     * ends by its TTL, and with it anything still attached.
     */
    void revokeQuietly(long leaseId) {
        CompletableFuture<?> revoke = client.getLeaseClient().revoke(leaseId).orTimeout(calls.timeout().toMillis(), TimeUnit.MILLISECONDS);
        revoking.add(revoke);
        revoke.whenComplete((ok, e) -> {
            revoking.remove(revoke);
            if (e != null && !EtcdCalls.isLeaseNotFound(e)) {
                LOG.debug("etcd lease {} not revoked, it ends by its TTL: {}", Long.toHexString(leaseId), e.toString());
            }
        });
    }

    private String newOwnerId() {
        return LeaseArguments.newOwnerId(ownerLabel);
    }

    private static long offsetIn(GetResponse response) {
        if (response.getKvs().isEmpty()) {
            return 0;
        }
        String text = response.getKvs().get(0).getValue().toString(StandardCharsets.UTF_8);
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IllegalStateException("the token offset " + response.getKvs().get(0).getKey().toString(StandardCharsets.UTF_8)
                    + " holds '" + text + "', not a number: it was written by something other than fenced", e);
        }
    }

    static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    private static Duration took(long started) {
        return Duration.ofNanos(System.nanoTime() - started);
    }

    /** Configures an {@link EtcdLeaseStore}; immutable once built. */
    public static final class Builder {
        private final EtcdEndpoints endpoints;
        private final Client client;
        private String prefix = DEFAULT_PREFIX;
        private String ownerLabel;
        private FencedObserver observer = FencedObserver.NONE;
        private Duration requestTimeout = Duration.ofSeconds(5);

        private Builder(EtcdEndpoints endpoints, Client client) {
            this.endpoints = endpoints;
            this.client = client;
        }

        /**
         * Puts {@code prefix} before every key ({@code fenced/} by default), so that applications
         * sharing one etcd keep apart leases and offsets of resources with the same name. Stores
         * exclude each other only under one prefix; tokens stay increasing across prefixes, as they
         * are revisions of one log (the offsets aside).
         *
         * @throws IllegalArgumentException for a prefix with whitespace or non-ASCII characters
         */
        public Builder keyPrefix(String prefix) {
            Objects.requireNonNull(prefix, "prefix");
            for (int i = 0; i < prefix.length(); i++) {
                char c = prefix.charAt(i);
                if (c <= ' ' || c > '~') {
                    throw new IllegalArgumentException("key prefix '" + prefix + "' has a whitespace or non-ASCII character at index " + i);
                }
            }
            this.prefix = prefix;
            return this;
        }

        /** A readable prefix for owner ids (e.g. a worker name), shown by status tools. */
        public Builder ownerLabel(String ownerLabel) {
            this.ownerLabel = LeaseArguments.requireValidResource(ownerLabel);
            return this;
        }

        /** Hears grants, renewals and raised offsets, for metrics. */
        public Builder observer(FencedObserver observer) {
            this.observer = FencedObserver.all(Objects.requireNonNull(observer, "observer"));
            return this;
        }

        /**
         * How long one call to etcd may take before it fails with {@link dev.fenced.StoreUnavailableException};
         * 5 s by default. It bounds each call, not a whole operation: an acquisition makes three.
         */
        public Builder requestTimeout(Duration requestTimeout) {
            if (requestTimeout == null || requestTimeout.isNegative() || requestTimeout.isZero()) {
                throw new IllegalArgumentException("request timeout must be positive, got " + requestTimeout);
            }
            if (requestTimeout.compareTo(Duration.ofMinutes(5)) > 0) {
                throw new IllegalArgumentException("request timeout " + Durations.human(requestTimeout)
                        + " is over 5 min; a caller waiting that long on a dead cluster is an outage");
            }
            this.requestTimeout = requestTimeout;
            return this;
        }

        /** Builds the store; with endpoints, its own jetcd client, which connects on first use. */
        public EtcdLeaseStore build() {
            return new EtcdLeaseStore(this);
        }
    }
}
