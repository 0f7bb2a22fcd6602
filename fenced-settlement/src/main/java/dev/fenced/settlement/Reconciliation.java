package dev.fenced.settlement;

import dev.fenced.Lease;
import dev.fenced.LeaseStore;
import dev.fenced.StoreUnavailableException;
import dev.fenced.jdbc.FencedRows;
import dev.fenced.jdbc.FencedTable;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.RefundGateway;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Compares a merchant's refund rows with the gateway, key by key, and repairs the cases that are
 * safe to repair.
 *
 * <p>{@link #check} only reads. {@link #repair} takes the merchant's lease and a fresh token, so no
 * worker runs meanwhile, and writes through fenced writes, so a stale worker that wakes up
 * afterwards is refused: a row with a matching refund at the gateway becomes {@code sent}
 * (from {@code pending}, {@code sending} or {@code failed}); with {@code retryFailed}, a
 * {@code failed} row without a refund goes back to {@code pending} for another attempt under the
 * same key; with {@code resendExpired}, a row stuck in {@code sending} past the provider's key
 * retention, with no refund under its key or reference, goes back to {@code pending} under a new
 * key; with {@code resendReturned}, a {@code returned} row (the provider failed or canceled the
 * refund after accepting it: no money moved) goes back to {@code pending} under a new key, for a
 * new attempt. A {@code settled} row whose refund the provider reports failed since
 * ({@link Kind#FAILED_AFTER_SETTLED}) gets the provider's word, unfenced, as its webhook would have
 * written it (RefundLifecycle): it is then a {@code returned} row like any other. Everything else (a row sent without a refund, a refund that does not match its row, a
 * refund no row knows, a refund under a row's key that another deployment or row owns) is only
 * reported: it needs a person. Immutable and thread-safe.
 */
public final class Reconciliation {
    /** What disagrees between a row and the gateway. */
    public enum Kind {
        /** The row says sent; the gateway has no refund under its key. */
        SENT_WITHOUT_REFUND(false),
        /** The gateway holds a matching refund; the row is still pending. */
        REFUND_WITHOUT_SENT(true),
        /** The gateway holds a matching refund; the row is stuck in sending. */
        SENDING_BUT_PAID(true),
        /** The row is stuck in sending and the gateway has no refund: the next settle looks it up and sends it under its key. */
        STUCK_IN_SENDING(false),
        /**
         * The row is stuck in sending, its first attempt older than the provider keeps keys (less the
         * margin), and the gateway has no refund under its key or its reference: no settle sends it
         * again under that key, which the provider may have forgotten. {@code --resend-expired}
         * gives it a new key and puts it back to pending once its first attempt is older than the
         * retention plus the margin: by then no request under the old key can still be on its way.
         */
        KEY_EXPIRED_UNPAID(false),
        /**
         * The provider failed or canceled the refund after accepting it ({@link RefundLifecycle}):
         * the money did not move. A new attempt needs a new key, and a person's decision.
         */
        RETURNED(false),
        /** The row is failed, but the gateway holds a matching refund. */
        FAILED_BUT_PAID(true),
        /**
         * The row is settled, but the provider reports its refund failed or canceled since (a card
         * refund that failed after it succeeded, whose news never reached the row): the money came
         * back to the merchant. {@code --repair} writes the provider's word, as a webhook would have
         * (the row becomes {@code returned}); a new attempt is then {@link Repairs#resendReturned}'s.
         */
        FAILED_AFTER_SETTLED(true),
        /** The refund under the row's key is for another merchant, amount or currency, or another gateway id than the row records. */
        MISMATCH(false),
        /**
         * A refund of this merchant at the gateway under a key no row of the merchant has (one that
         * names another deployment as its owner is that deployment's, not reported here).
         */
        REFUND_WITHOUT_ROW(false),
        /** More than one refund at the gateway under one key (a gateway that ignored the key). */
        DUPLICATE_REFUND(false),
        /**
         * The refund under the row's key names another owner ({@link RefundOwner}: another
         * deployment sharing the gateway, or another row), whatever its amount: it is not the
         * row's, which has no refund of its own under that key.
         */
        FOREIGN_REFUND(false);

        private final boolean repairable;

        Kind(boolean repairable) {
            this.repairable = repairable;
        }

        /**
         * Whether {@link #repair} fixes it without being asked for more: a matching refund exists, so
         * the row becomes sent; or, for {@link #FAILED_AFTER_SETTLED}, the provider's word is written.
         */
        public boolean repairable() {
            return repairable;
        }

        public String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /**
     * One disagreement.
     *
     * @param refundId the row's id, or the gateway refund's reference for a refund without a row
     * @param state the row's state, or null
     * @param gatewayRefundId the gateway's refund id, or null
     * @param repairedTo the state the repair wrote, or null when it was not repaired
     */
    public record Discrepancy(Kind kind, String refundId, String state, String gatewayRefundId, String detail, String repairedTo) {
        Discrepancy repaired(String toState) {
            return new Discrepancy(kind, refundId, state, gatewayRefundId, detail, toState);
        }
    }

    /**
     * What a reconciliation found.
     *
     * @param token the repair's token, 0 for a check
     * @param failed failed rows with no refund at the gateway: consistent, retried only on request
     * @param retried of those, the ids put back to pending
     */
    public record Report(String merchant, int rows, int gatewayRefunds, long token, List<Discrepancy> discrepancies,
                         List<String> failed, List<String> retried) {
        /** The discrepancies a repair did not fix; none means the rows and the gateway agree. */
        public List<Discrepancy> unresolved() {
            return discrepancies.stream().filter(d -> d.repairedTo() == null).toList();
        }
    }

    /** A repair could not take the merchant's lease: a worker holds it. */
    public static final class LeaseHeldException extends IllegalStateException {
        LeaseHeldException(String merchant) {
            super("a worker holds the lease of " + merchant + "; repair when it is done");
        }
    }

    // The refund table seen with failed rows as the claimable ones: a repair takes a failed row over
    // with a fenced claim (fence < token) exactly as a worker takes over a pending one.
    private static final FencedRows FAILED_ROWS = FencedRows.of(FencedTable.builder(RefundSchema.TABLE)
            .scopeColumn("merchant").states("failed", "sending", "sent").build());
    private static final FencedRows ROWS = FencedRows.of(RefundSchema.table());
    private static final FencedRows RETURNED_ROWS = FencedRows.of(FencedTable.builder(RefundSchema.TABLE)
            .scopeColumn("merchant").states("returned", "sending", "sent").build());

    /** {@code firstAttemptAgeMillis} is null for a row never claimed, or claimed before its first attempt was recorded. */
    private record Row(String id, BigDecimal amount, String currency, String key, String state, String gatewayReference,
                       Long firstAttemptAgeMillis, String failureReason) {
    }

    /** Told how far a check has come: how many rows it compares, then each one compared. */
    public interface ProgressListener {
        ProgressListener NONE = new ProgressListener() {
            @Override
            public void rowsToCheck(int rows) {
            }

            @Override
            public void rowChecked() {
            }
        };

        void rowsToCheck(int rows);

        void rowChecked();
    }

    private final DataSource dataSource;
    private final RefundGateway gateway;
    private final ProgressListener progress;
    private final KeyRetention keyRetention;

    private Reconciliation(DataSource dataSource, RefundGateway gateway, ProgressListener progress, KeyRetention keyRetention) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.gateway = Objects.requireNonNull(gateway, "gateway");
        this.progress = Objects.requireNonNull(progress, "progress");
        this.keyRetention = keyRetention;
    }

    /** A reconciliation that takes the provider to keep keys 24 hours, and stops trusting them an hour before. */
    public static Reconciliation of(DataSource dataSource, RefundGateway gateway) {
        return new Reconciliation(dataSource, gateway, ProgressListener.NONE,
                new KeyRetention(KeyRetention.DEFAULT_RETENTION, KeyRetention.DEFAULT_MARGIN, Clock.systemUTC()));
    }

    /** The same reconciliation, telling {@code progress} how far each check has come. */
    public Reconciliation reportingTo(ProgressListener progress) {
        return new Reconciliation(dataSource, gateway, progress, keyRetention);
    }

    /**
     * The same reconciliation, for a provider that keeps keys {@code retention} and a worker that
     * stops trusting them {@code margin} before (as {@link SettlementWorker.Builder#keyRetention}).
     *
     * @throws IllegalArgumentException for a retention that is not positive, or a margin not below it
     */
    public Reconciliation keyRetention(Duration retention, Duration margin) {
        return new Reconciliation(dataSource, gateway, progress, new KeyRetention(retention, margin, Clock.systemUTC()));
    }

    /** Reads every row of the merchant and the gateway's refunds for it; writes nothing. */
    public Report check(String merchant) {
        Merchants.requireValid(merchant);
        return compare(merchant, 0);
    }

    /**
     * Checks, then repairs the safe cases under the merchant's lease and a fresh token.
     *
     * @throws LeaseHeldException when a worker holds the merchant's lease
     */
    public Report repair(String merchant, LeaseStore leases, Duration ttl, boolean retryFailed) {
        return repair(merchant, leases, ttl, retryFailed, false);
    }

    /**
     * As {@link #repair(String, LeaseStore, Duration, boolean)}; with {@code resendExpired}, each
     * {@link Kind#KEY_EXPIRED_UNPAID} row also gets a new idempotency key and goes back to pending,
     * its first attempt forgotten, for the next settle to send. Only those: a row still inside the key
     * retention keeps its key, which protects it from a request of a stale holder still on its way.
     *
     * @throws LeaseHeldException when a worker holds the merchant's lease
     */
    public Report repair(String merchant, LeaseStore leases, Duration ttl, boolean retryFailed, boolean resendExpired) {
        return repair(merchant, leases, ttl, new Repairs(retryFailed, resendExpired, false));
    }

    /**
     * What a repair may do beyond marking sent the rows whose refund the gateway holds: each is an
     * operator's decision, off by default.
     *
     * @param retryFailed put {@code failed} rows without a refund back to pending, under the same key
     * @param resendExpired give rows past the key retention, with no refund anywhere, a new key
     * @param resendReturned give {@code returned} rows (the provider's refund failed or was canceled:
     *     no money moved) a new key and put them back to pending: a new attempt, a new refund
     */
    public record Repairs(boolean retryFailed, boolean resendExpired, boolean resendReturned) {
    }

    /**
     * Checks, then repairs under the merchant's lease and a fresh token what {@code repairs} allows.
     *
     * @throws LeaseHeldException when a worker holds the merchant's lease
     */
    public Report repair(String merchant, LeaseStore leases, Duration ttl, Repairs repairs) {
        boolean retryFailed = repairs.retryFailed();
        boolean resendExpired = repairs.resendExpired();
        Merchants.requireValid(merchant);
        Optional<Lease> acquired = leases.tryAcquire(Merchants.resource(merchant), ttl);
        if (acquired.isEmpty()) {
            throw new LeaseHeldException(merchant);
        }
        try (Lease lease = acquired.get()) {
            Report found = compare(merchant, lease.token());
            Set<String> rekeyable = resendExpired ? rekeyable(merchant) : Set.of();
            List<Discrepancy> after = new ArrayList<>();
            for (Discrepancy d : found.discrepancies()) {
                if (d.kind() == Kind.FAILED_AFTER_SETTLED) {
                    String reason = writeProvidersWord(merchant, d);
                    if (reason == null) {
                        after.add(d); // nothing written: the provider no longer says so, or the row changed since
                        continue;
                    }
                    after.add(d.repaired("returned"));
                    // Returned now: the customer still has no refund, which is the returned row's own discrepancy.
                    Discrepancy returned = new Discrepancy(Kind.RETURNED, d.refundId(), "returned", d.gatewayRefundId(),
                            reason + "; a new attempt needs a new key", null);
                    after.add(repairs.resendReturned() ? returned.repaired(resend(d.refundId(), lease.token())) : returned);
                } else if (d.kind().repairable()) {
                    after.add(d.repaired(markSent(d, lease.token())));
                } else if (d.kind() == Kind.KEY_EXPIRED_UNPAID && rekeyable.contains(d.refundId())) {
                    after.add(d.repaired(rekey(d.refundId(), lease.token())));
                } else if (d.kind() == Kind.RETURNED && repairs.resendReturned()) {
                    after.add(d.repaired(resend(d.refundId(), lease.token())));
                } else {
                    after.add(d);
                }
            }
            List<String> retried = new ArrayList<>();
            if (retryFailed) {
                for (String id : found.failed()) {
                    retry(id, lease.token());
                    retried.add(id);
                }
            }
            return new Report(merchant, found.rows(), found.gatewayRefunds(), lease.token(), after, found.failed(), retried);
        }
    }

    private Report compare(String merchant, long token) {
        List<Row> rows = rows(merchant);
        String deployment = deployment();
        List<GatewayRefund> refunds = gateway.refundsOf(merchant);
        Map<String, List<GatewayRefund>> byKey = new LinkedHashMap<>();
        refunds.forEach(r -> byKey.computeIfAbsent(r.idempotencyKey(), k -> new ArrayList<>()).add(r));
        List<Discrepancy> found = new ArrayList<>();
        List<String> failedUnpaid = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        progress.rowsToCheck(rows.size());
        for (Row row : rows) {
            keys.add(row.key());
            List<GatewayRefund> mine = byKey.getOrDefault(row.key(), List.of());
            GatewayRefund refund = mine.isEmpty() ? lookUp(merchant, row) : mine.get(0);
            if (mine.size() > 1) {
                found.add(new Discrepancy(Kind.DUPLICATE_REFUND, row.id(), row.state(), mine.get(1).id(),
                        mine.size() + " refunds under key " + row.key(), null));
            }
            Discrepancy d = foreign(deployment, merchant, row, refund);
            d = d != null ? d : compare(merchant, row, refund);
            if (d != null && d.kind() == Kind.STUCK_IN_SENDING && keyOutlived(row)) {
                d = expired(merchant, deployment, row);
            }
            if (d != null) {
                found.add(d);
            } else if (row.state().equals("failed") && refund == null) {
                failedUnpaid.add(row.id());
            }
            progress.rowChecked();
        }
        for (GatewayRefund refund : refunds) {
            // A refund the provider failed or canceled moved no money: no row needs to answer for it (a row sent again holds a new key).
            boolean moneyMoved = !refund.finalStatus() || GatewayRefund.SUCCEEDED.equals(refund.status());
            if (moneyMoved && !keys.contains(refund.idempotencyKey()) && !ownedElsewhere(deployment, refund)) {
                found.add(new Discrepancy(Kind.REFUND_WITHOUT_ROW, refund.reference(), null, refund.id(),
                        refund.amount().toPlainString() + " " + refund.currency() + " under key " + refund.idempotencyKey(), null));
            }
        }
        return new Report(merchant, rows.size(), refunds.size(), token, found, failedUnpaid, List.of());
    }

    /** Rows whose first attempt is older than the retention plus the margin: no request under their key can still be on its way. */
    private Set<String> rekeyable(String merchant) {
        long oldEnough = keyRetention.retention().plus(keyRetention.margin()).toMillis();
        Set<String> ids = new HashSet<>();
        for (Row row : rows(merchant)) {
            if (row.firstAttemptAgeMillis() != null && row.firstAttemptAgeMillis() >= oldEnough) {
                ids.add(row.id());
            }
        }
        return ids;
    }

    private boolean keyOutlived(Row row) {
        return row.firstAttemptAgeMillis() != null
                && row.firstAttemptAgeMillis() >= keyRetention.retention().minus(keyRetention.margin()).toMillis();
    }

    /**
     * A row stuck in sending past the key retention, with no refund under its key: found by
     * reference (the provider's own lookup), it is paid and repairable; not found, only a new key sends it.
     */
    private Discrepancy expired(String merchant, String deployment, Row row) {
        RefundRow asSent = new RefundRow(row.id(), merchant, row.amount(), row.currency(), row.key(), row.state(), deployment);
        Optional<GatewayRefund> paid = gateway.findByReference(merchant, row.id()).stream()
                .filter(refund -> GatewayAnswer.of(asSent, refund).kind() == GatewayAnswer.Kind.SUCCEEDED).findFirst();
        if (paid.isPresent()) {
            return new Discrepancy(Kind.SENDING_BUT_PAID, row.id(), row.state(), paid.get().id(), "found by reference", null);
        }
        return new Discrepancy(Kind.KEY_EXPIRED_UNPAID, row.id(), row.state(), null, "first attempt "
                + Duration.ofMillis(row.firstAttemptAgeMillis()).toHours() + " h ago, past the key retention of " + keyRetention.retention()
                + " less " + keyRetention.margin() + "; no refund under its key or reference", null);
    }

    /** A refund under the row's key that is not listed for this merchant: only rows that claim a call went out are looked up. */
    private GatewayRefund lookUp(String merchant, Row row) {
        return row.state().equals("pending") ? null : gateway.findByKey(merchant, row.id(), row.key()).orElse(null);
    }

    /** The refund under the row's key, when it names another owner: checked first, since nothing else about it is the row's. */
    private static Discrepancy foreign(String deployment, String merchant, Row row, GatewayRefund refund) {
        String whose = refund == null ? null : new RefundOwner(deployment, merchant, row.id()).disowns(refund);
        return whose == null ? null : new Discrepancy(Kind.FOREIGN_REFUND, row.id(), row.state(), refund.id(), whose, null);
    }

    private static boolean ownedElsewhere(String deployment, GatewayRefund refund) {
        String owner = refund.metadata().get(RefundOwner.DEPLOYMENT);
        return owner != null && !owner.equals(deployment);
    }

    /** This database's deployment id, or null when no migration made one (a read-only check may meet such a database). */
    private String deployment() {
        try (Connection connection = dataSource.getConnection()) {
            return RefundOwner.deploymentOf(connection);
        } catch (SQLException e) {
            throw new StoreUnavailableException("reading the deployment id failed: " + e.getMessage(), e);
        }
    }

    private static Discrepancy compare(String merchant, Row row, GatewayRefund refund) {
        if (refund != null && (!refund.merchant().equals(merchant) || refund.amount().compareTo(row.amount()) != 0
                || !refund.currency().equals(row.currency())
                || (row.gatewayReference() != null && !row.gatewayReference().equals(refund.id())))) {
            return new Discrepancy(Kind.MISMATCH, row.id(), row.state(), refund.id(), "gateway: " + refund.merchant() + " "
                    + refund.amount().toPlainString() + " " + refund.currency() + "; row: " + merchant + " " + row.amount().toPlainString()
                    + " " + row.currency() + (row.gatewayReference() == null ? "" : " recorded as " + row.gatewayReference()), null);
        }
        if (refund != null && row.state().equals("returned")
                && !(GatewayRefund.FAILED.equals(refund.status()) || GatewayRefund.CANCELED.equals(refund.status()))) {
            // Returned here, not failed there (succeeded, pending, or unsaid): resending it could pay twice. A person looks.
            return new Discrepancy(Kind.MISMATCH, row.id(), row.state(), refund.id(), "returned here, but the gateway reports the refund "
                    + (refund.status() == null ? "without a status" : refund.status()), null);
        }
        if (refund != null && row.state().equals("settled")
                && (GatewayRefund.FAILED.equals(refund.status()) || GatewayRefund.CANCELED.equals(refund.status()))) {
            // A card refund that failed after it succeeded, whose news never came: the money is back with the merchant.
            return new Discrepancy(Kind.FAILED_AFTER_SETTLED, row.id(), row.state(), refund.id(), "settled here, but the gateway reports"
                    + " the refund " + refund.status() + (refund.failureReason() == null ? "" : " (" + refund.failureReason() + ")")
                    + ": the money came back to the merchant, and no news of it reached the row", null);
        }
        Kind kind = switch (row.state()) {
            case "sent", "settled" -> refund == null ? Kind.SENT_WITHOUT_REFUND : null;
            case "returned" -> refund == null ? Kind.SENT_WITHOUT_REFUND : Kind.RETURNED;
            case "pending" -> refund == null ? null : Kind.REFUND_WITHOUT_SENT;
            case "sending" -> refund == null ? Kind.STUCK_IN_SENDING : Kind.SENDING_BUT_PAID;
            case "failed" -> refund == null ? null : Kind.FAILED_BUT_PAID;
            default -> null;
        };
        if (kind == null) {
            return null;
        }
        String detail = refund == null ? "no refund under key " + row.key()
                : kind == Kind.RETURNED ? (row.failureReason() == null ? "returned by the provider" : row.failureReason())
                + "; a new attempt needs a new key"
                : "gateway holds " + refund.amount().toPlainString() + " " + refund.currency() + " under the row's key";
        return new Discrepancy(kind, row.id(), row.state(), refund == null ? null : refund.id(), detail, null);
    }

    /**
     * The provider's word on a settled row whose refund failed since, written as the webhook would
     * have written it (RefundLifecycle.moveForward: no fence, conditional on the row and the refund
     * id); read again from the provider first. Returns the reason written, or null when nothing was:
     * the provider no longer reports the failure, or the row changed since the check.
     */
    private String writeProvidersWord(String merchant, Discrepancy d) {
        GatewayRefund now = d.gatewayRefundId() == null ? null : gateway.refundById(merchant, d.gatewayRefundId()).orElse(null);
        RefundLifecycle.FinalWord word = now == null ? null : RefundLifecycle.FinalWord.of(now);
        if (word == null || word.settled()) {
            return null;
        }
        boolean[] moved = {false};
        inTransaction(connection -> moved[0] = RefundLifecycle.moveForward(connection, d.refundId(), d.gatewayRefundId(), word));
        return moved[0] ? word.reason() : null;
    }

    /** Takes the row over with the repair's token and confirms it with the gateway's refund id. */
    private String markSent(Discrepancy d, long token) {
        inTransaction(connection -> {
            (d.state().equals("failed") ? FAILED_ROWS : ROWS).claim(connection, d.refundId(), token);
            ROWS.confirm(connection, d.refundId(), token, Map.of("gateway_reference", d.gatewayRefundId()));
        });
        return "sent";
    }

    /**
     * A failed row without a refund back to pending, fenced at the repair's token: the next settle
     * sends it under the same key. Its first attempt is forgotten with it: the refusal made nothing
     * and no refund exists under the key, so a request after the provider pruned the key is a first
     * one, and the worker must not hold the row back as if its key were in doubt.
     */
    private void retry(String id, long token) {
        inTransaction(connection -> {
            FAILED_ROWS.claim(connection, id, token);
            ROWS.finish(connection, id, token, "pending", Map.of());
            forgetFirstAttempt(connection, id, token);
        });
    }

    /**
     * A row stuck in sending past the key retention, with no refund anywhere, taken over with the
     * repair's token: a new key, its first attempt forgotten, back to pending.
     */
    private String rekey(String id, long token) {
        inTransaction(connection -> {
            ROWS.claim(connection, id, token);
            ROWS.finish(connection, id, token, "pending", Map.of("idempotency_key", UUID.randomUUID().toString()));
            forgetFirstAttempt(connection, id, token);
        });
        return "pending";
    }

    /**
     * A returned row, its refund failed or canceled at the provider, taken with the repair's token:
     * a new key (the old one names the failed refund), no failure reason, its first attempt
     * forgotten, back to pending for a new attempt.
     */
    private String resend(String id, long token) {
        inTransaction(connection -> {
            RETURNED_ROWS.claim(connection, id, token);
            ROWS.finish(connection, id, token, "pending", Map.of("idempotency_key", UUID.randomUUID().toString()));
            forgetFirstAttempt(connection, id, token);
            try (PreparedStatement clear = connection.prepareStatement(
                    "UPDATE refund SET failure_reason = NULL WHERE id = ? AND fence = ? AND state = 'pending'")) {
                clear.setString(1, id);
                clear.setLong(2, token);
                clear.executeUpdate();
            }
        });
        return "pending";
    }

    private static void forgetFirstAttempt(Connection connection, String id, long token) throws SQLException {
        try (PreparedStatement clear = connection.prepareStatement(
                "UPDATE refund SET first_attempt_at = NULL WHERE id = ? AND fence = ? AND state = 'pending'")) {
            clear.setString(1, id);
            clear.setLong(2, token);
            clear.executeUpdate();
        }
    }

    private interface Work {
        void run(Connection connection) throws SQLException;
    }

    private void inTransaction(Work work) {
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(false);
            try {
                work.run(connection);
                connection.commit();
            } catch (SQLException | RuntimeException e) {
                connection.rollback();
                throw e;
            } finally {
                connection.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            throw new StoreUnavailableException("repair failed: " + e.getMessage(), e);
        }
    }

    private List<Row> rows(String merchant) {
        List<Row> rows = new ArrayList<>();
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement("SELECT id, amount, currency, idempotency_key, state,"
                     + " gateway_reference, " + RefundRow.firstAttemptAgeMillis(connection) + ", failure_reason FROM refund"
                     + " WHERE merchant = ? ORDER BY seq")) {
            statement.setString(1, merchant);
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    double age = rs.getDouble(7);
                    Long ageMillis = rs.wasNull() ? null : (long) age;
                    rows.add(new Row(rs.getString(1), rs.getBigDecimal(2), rs.getString(3), rs.getString(4), rs.getString(5), rs.getString(6),
                            ageMillis, rs.getString(8)));
                }
            }
        } catch (SQLException e) {
            throw new StoreUnavailableException("reading the refunds of " + merchant + " failed: " + e.getMessage(), e);
        }
        return rows;
    }
}
