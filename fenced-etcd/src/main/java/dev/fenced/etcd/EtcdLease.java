package dev.fenced.etcd;

import dev.fenced.FencedObserver.RenewalOutcome;
import dev.fenced.Lease;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;

/**
 * A lease granted by {@link EtcdLeaseStore}. It is this owner's while the lease key holds its owner
 * id and was created by its grant (the create revision): every renew and release compares both, so
 * a holder whose key expired, and was written again by the next, changes nothing.
 */
final class EtcdLease implements Lease {
    private final EtcdLeaseStore store;
    private final String resource;
    private final long token;
    /** The lease key's create revision: the grant's write. */
    private final long createRevision;
    private final String ownerId;
    private final ByteSequence key;
    private final ByteSequence owner;
    /** The etcd lease the key is attached to now, and the TTL it was asked for and granted, in seconds; changed by renewals. */
    private long etcdLease;
    private long askedSeconds;
    private long grantedSeconds;

    EtcdLease(EtcdLeaseStore store, String resource, long token, long createRevision, String ownerId, long etcdLease, long askedSeconds,
            long grantedSeconds) {
        this.store = store;
        this.resource = resource;
        this.token = token;
        this.createRevision = createRevision;
        this.ownerId = ownerId;
        this.key = EtcdLeaseStore.bytes(store.leaseKey(resource));
        this.owner = EtcdLeaseStore.bytes(ownerId);
        this.etcdLease = etcdLease;
        this.askedSeconds = askedSeconds;
        this.grantedSeconds = grantedSeconds;
    }

    @Override
    public String resource() {
        return resource;
    }

    @Override
    public long token() {
        return token;
    }

    @Override
    public String ownerId() {
        return ownerId;
    }

    /**
     * Extends the lease to {@code ttl} from now, rounded up to whole seconds as a grant is. The same
     * TTL as the etcd lease already has is one keep-alive; another TTL needs another etcd lease:
     * granted, put under the key by a transaction that compares owner and create revision, and the
     * old one revoked (a failed compare revokes the new one instead).
     */
    @Override
    public synchronized boolean renew(Duration ttl) {
        long seconds = EtcdLeaseStore.ttlSeconds(ttl);
        String who = "renew(" + resource + ", token " + token + ")";
        boolean renewed;
        try {
            renewed = sameTtl(seconds) ? keepAlive(who) : moveToNewLease(seconds, who);
        } catch (RuntimeException e) {
            store.observer().renewed(resource, token, RenewalOutcome.ERROR);
            throw e;
        }
        store.observer().renewed(resource, token, renewed ? RenewalOutcome.RENEWED : RenewalOutcome.LOST);
        return renewed;
    }

    /** Whether a grant for {@code seconds} would give the TTL the etcd lease has: the same ask, or both raised to the server's minimum. */
    private boolean sameTtl(long seconds) {
        return seconds == askedSeconds || (seconds < grantedSeconds && askedSeconds < grantedSeconds);
    }

    private boolean keepAlive(String who) {
        try {
            LeaseKeepAliveResponse alive = store.calls().await(store.client().getLeaseClient().keepAliveOnce(etcdLease), who,
                    "a keep-alive of etcd lease " + Long.toHexString(etcdLease));
            if (alive.getTTL() <= 0) {
                return false;
            }
        } catch (RuntimeException e) {
            if (EtcdCalls.isLeaseNotFound(e)) {
                return false; // expired: the key went with it
            }
            throw e;
        }
        // The etcd lease lives; the key may not be on it any more (deleted behind our back): then it kept nothing.
        return isHeld();
    }

    private boolean moveToNewLease(long seconds, String who) {
        LeaseGrantResponse grant = store.calls().await(store.client().getLeaseClient().grant(seconds), who,
                "a grant of an etcd lease of " + seconds + " s");
        TxnResponse txn;
        try {
            txn = store.calls().await(store.client().getKVClient().txn()
                    .If(isOurs())
                    .Then(Op.put(key, owner, PutOption.builder().withLeaseId(grant.getID()).build()))
                    .commit(), who, "the transaction that moves the key to the new etcd lease");
        } catch (RuntimeException e) {
            // Unknown outcome: if the key moved, revoking the new lease ends it, which is what a failed renewal may do.
            store.revokeQuietly(grant.getID());
            throw e;
        }
        if (!txn.isSucceeded()) {
            store.revokeQuietly(grant.getID());
            return false;
        }
        store.revokeQuietly(etcdLease); // the key is on the new lease: revoking the old one deletes nothing
        etcdLease = grant.getID();
        askedSeconds = seconds;
        grantedSeconds = grant.getTTL();
        return true;
    }

    @Override
    public boolean isHeld() {
        GetResponse read = store.calls().await(store.client().getKVClient().get(key), "isHeld(" + resource + ", token " + token + ")",
                "a read of the lease key");
        if (read.getKvs().isEmpty()) {
            return false;
        }
        KeyValue kv = read.getKvs().get(0);
        return kv.getCreateRevision() == createRevision && kv.getValue().equals(owner);
    }

    /**
     * Revokes the etcd lease, which deletes the lease key with it: one write through the log where a
     * compare-and-delete and a revocation took two. Only this holder's key is ever attached to its
     * etcd lease, so the revocation cannot touch another holder's; an etcd lease already gone
     * (expired, or revoked) answers false. A key deleted by hand under a live etcd lease reads as released.
     */
    @Override
    public synchronized boolean release() {
        try {
            store.calls().await(store.client().getLeaseClient().revoke(etcdLease), "release(" + resource + ", token " + token + ")",
                    "the revocation of etcd lease " + Long.toHexString(etcdLease) + ", which deletes the lease key");
            return true;
        } catch (RuntimeException e) {
            if (EtcdCalls.isLeaseNotFound(e)) {
                return false;
            }
            throw e;
        }
    }

    private Cmp[] isOurs() {
        return new Cmp[] {new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(owner)), new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(createRevision))};
    }

    @Override
    public String toString() {
        return "Lease[" + resource + ", token " + token + ", owner " + ownerId + "]";
    }
}
