package dev.fenced.cli;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import dev.fenced.redis.LeaseSnapshot;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSummary;
import java.util.List;
import javax.sql.DataSource;

/**
 * {@code status --all}: one row per merchant, in merchant order, a page at a time. Reads only: the
 * refund rows grouped by merchant and state, and each merchant's lease and counter in Redis.
 */
final class StatusBoard {

    /** One merchant's row. {@code holder} is the lease owner's label (before the '/'), or null when the lease is free. */
    @JsonPropertyOrder({"merchant", "holder", "leaseMillisLeft", "counter", "pending", "sending", "sent", "failed", "highestFence"})
    record Row(String merchant, String holder, long leaseMillisLeft, Long counter, long pending, long sending, long sent, long failed,
               long highestFence) {
    }

    /** A page of rows and where it sits among all merchants. */
    @JsonPropertyOrder({"merchants", "offset", "rows"})
    record Page(int merchants, int offset, List<Row> rows) {
    }

    static Page read(DataSource db, RedisLeaseStore leases, int offset, int limit) {
        int merchants = RefundSummary.merchantCount(db);
        List<Row> rows = RefundSummary.page(db, offset, limit).stream().map(summary -> {
            LeaseSnapshot lease = leases.inspect(Merchants.resource(summary.merchant()));
            String holder = lease.holder() == null ? null : label(lease.holder());
            return new Row(summary.merchant(), holder, lease.timeLeft().toMillis(), lease.counter(), summary.count("pending"),
                    summary.count("sending"), summary.count("sent"), summary.count("failed"), summary.highestFence());
        }).toList();
        return new Page(merchants, offset, rows);
    }

    /** Owner ids are {@code label/uuid}, or a bare uuid: the label is what an operator recognises. */
    private static String label(String ownerId) {
        int slash = ownerId.indexOf('/');
        return slash < 0 ? ownerId.substring(0, Math.min(8, ownerId.length())) : ownerId.substring(0, slash);
    }

    static String text(Page page) {
        StringBuilder out = new StringBuilder(String.format("%-20s %-22s %8s %9s %8s %8s %8s %7s %9s%n",
                "MERCHANT", "LEASE HOLDER", "LEFT", "COUNTER", "PENDING", "SENDING", "SENT", "FAILED", "FENCE"));
        for (Row row : page.rows()) {
            out.append(String.format("%-20s %-22s %8s %9s %8d %8d %8d %7d %9d%n", row.merchant(),
                    row.holder() == null ? "-" : row.holder(),
                    row.holder() == null ? "-" : String.format("%.1fs", row.leaseMillisLeft() / 1000.0),
                    row.counter() == null ? "-" : row.counter().toString(),
                    row.pending(), row.sending(), row.sent(), row.failed(), row.highestFence()));
        }
        if (page.rows().isEmpty()) {
            out.append(page.merchants() == 0 ? "no merchant has refunds\n" : "no merchants on this page\n");
        } else {
            int last = page.offset() + page.rows().size();
            out.append(String.format("merchants %d-%d of %d%s%n", page.offset() + 1, last, page.merchants(),
                    last < page.merchants() ? "; next page: --offset " + last : ""));
        }
        return out.toString();
    }
}
