package dev.fenced.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import dev.fenced.StoreUnavailableException;
import dev.fenced.fleet.JobQueueStatus;
import dev.fenced.redis.LeaseSnapshot;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSummary;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * {@code status --all}: one row per merchant, in merchant order, a page at a time, the workers
 * holding the page's leases and, with NATS, the job stream. Reads only: the refund rows grouped by
 * merchant and state, each merchant's lease and counter in Redis, the stream's consumer.
 */
final class StatusBoard {
    /** 114 columns: fits a wide terminal with the merchant ids and holder labels the commands make. */
    private static final String HEADER = "%-20s %-18s %7s %8s %7s %7s %7s %7s %8s %6s %9s%n";
    private static final String LINE = "%-20s %-18s %7s %8s %7d %7d %7d %7d %8d %6d %9d%n";

    /**
     * One merchant's row. {@code holder} is the lease owner's label (before the '/'), or null when the lease is free;
     * {@code tokensProblem} what is wrong with its tokens as {@code --tokens} sees them ({@link TokensCommand#problem}), or null.
     */
    @JsonPropertyOrder({"merchant", "holder", "leaseMillisLeft", "counter", "pending", "sending", "sent", "settled", "returned", "failed",
            "highestFence",
            "tokensProblem"})
    record Row(String merchant, String holder, Long leaseMillisLeft, Long counter, long pending, long sending, long sent,
               long settled, long returned, long failed, long highestFence, @JsonInclude(JsonInclude.Include.NON_NULL) String tokensProblem) {
    }

    /** A lease holder (a worker, by its label) and the merchants of the page it holds. */
    @JsonPropertyOrder({"holder", "merchants"})
    record Holder(String holder, List<String> merchants) {
    }

    /**
     * A page of rows and where it sits among all merchants; the holders of the page's leases; the
     * job stream when NATS was given ({@code jobsUnknown} says why it could not be read).
     * {@code leasesUnknown} says why the leases and counters could not be read (Redis unreachable):
     * the rows' lease columns are then null.
     */
    @JsonPropertyOrder({"merchants", "offset", "rows", "holders", "leasesUnknown", "jobs", "jobsUnknown"})
    record Page(int merchants, int offset, List<Row> rows, List<Holder> holders,
                @JsonInclude(JsonInclude.Include.NON_NULL) String leasesUnknown,
                @JsonInclude(JsonInclude.Include.NON_NULL) JobQueueStatus jobs,
                @JsonInclude(JsonInclude.Include.NON_NULL) String jobsUnknown) {
    }

    /**
     * Reads a page. {@code leases} is null when the lease store could not be reached, {@code leasesUnknown} then says why; a Redis
     * that stops answering during the page leaves the rest of the page's lease columns empty, with the reason.
     */
    static Page read(DataSource db, OpenLeases leases, String leasesUnknown, Connections connections, int offset, int limit,
                     JobQueueStatus jobs, String jobsUnknown) {
        int merchants = RefundSummary.merchantCount(db);
        String[] unknown = {leases == null ? leasesUnknown : null};
        List<Row> rows = RefundSummary.page(db, offset, limit).stream().map(summary -> {
            String resource = Merchants.resource(summary.merchant());
            LeaseSnapshot lease = null;
            if (unknown[0] == null) {
                try {
                    lease = leases.snapshot(resource);
                } catch (StoreUnavailableException e) {
                    unknown[0] = StatusCommand.outage(e); // one timeout for the page, not one per row
                }
            }
            if (lease == null) {
                return new Row(summary.merchant(), null, null, null, summary.count("pending"), summary.count("sending"),
                        summary.count("sent"), summary.count("settled"), summary.count("returned"), summary.count("failed"),
                        summary.highestFence(), null);
            }
            String holder = lease.holder() == null ? null : label(lease.holder());
            String tokensProblem = connections.tokensProblem(lease, summary.highestFence());
            return new Row(summary.merchant(), holder, lease.timeLeft().toMillis(), lease.counter(), summary.count("pending"),
                    summary.count("sending"), summary.count("sent"), summary.count("settled"), summary.count("returned"), summary.count("failed"),
                    summary.highestFence(), tokensProblem);
        }).toList();
        Map<String, List<String>> held = new TreeMap<>();
        rows.stream().filter(row -> row.holder() != null)
                .forEach(row -> held.computeIfAbsent(row.holder(), h -> new ArrayList<>()).add(row.merchant()));
        List<Holder> holders = held.entrySet().stream().map(e -> new Holder(e.getKey(), List.copyOf(e.getValue()))).toList();
        return new Page(merchants, offset, rows, holders, unknown[0], jobs, jobsUnknown);
    }

    /** Owner ids are {@code label/uuid}, or a bare uuid: the label is what an operator recognises. */
    private static String label(String ownerId) {
        int slash = ownerId.indexOf('/');
        return slash < 0 ? ownerId.substring(0, Math.min(8, ownerId.length())) : ownerId.substring(0, slash);
    }

    static String text(Page page) {
        StringBuilder out = new StringBuilder(String.format(HEADER,
                "MERCHANT", "LEASE HOLDER", "LEFT", "COUNTER", "PENDING", "SENDING", "SENT", "SETTLED", "RETURNED", "FAILED", "FENCE"));
        for (Row row : page.rows()) {
            boolean known = row.leaseMillisLeft() != null;
            out.append(String.format(LINE, row.merchant(),
                    !known ? "?" : row.holder() == null ? "-" : row.holder(),
                    !known ? "?" : row.holder() == null ? "-" : String.format("%.1fs", row.leaseMillisLeft() / 1000.0),
                    !known ? "?" : row.counter() == null ? "-" : row.counter().toString(),
                    row.pending(), row.sending(), row.sent(), row.settled(), row.returned(), row.failed(), row.highestFence()));
        }
        if (page.rows().isEmpty()) {
            out.append(page.merchants() == 0 ? "no merchant has refunds\n" : "no merchants on this page\n");
        } else {
            int last = page.offset() + page.rows().size();
            out.append(String.format("merchants %d-%d of %d%s%n", page.offset() + 1, last, page.merchants(),
                    last < page.merchants() ? "; next page: --offset " + last : ""));
        }
        List<String> failed = page.rows().stream().filter(row -> row.failed() > 0).map(row -> row.merchant() + " (" + row.failed() + ")")
                .toList();
        if (!failed.isEmpty()) {
            out.append("failed refunds on this page, not paid, need an operator (fenced reconcile --merchant M): ")
                    .append(String.join(", ", failed)).append('\n');
        }
        List<String> returned = page.rows().stream().filter(row -> row.returned() > 0)
                .map(row -> row.merchant() + " (" + row.returned() + ")").toList();
        if (!returned.isEmpty()) {
            out.append("refunds returned by the provider on this page (the money did not move; a new attempt is an operator's call): ")
                    .append(String.join(", ", returned)).append('\n');
        }
        page.rows().stream().filter(row -> row.tokensProblem() != null)
                .forEach(row -> out.append(row.merchant()).append(": ").append(row.tokensProblem()).append('\n'));
        if (page.leasesUnknown() != null) {
            out.append("leases: unknown (?): ").append(page.leasesUnknown()).append('\n');
        }
        if (!page.holders().isEmpty()) {
            out.append("workers holding leases on this page: ").append(String.join(", ", page.holders().stream()
                    .map(h -> h.holder() + " (" + h.merchants().size() + ")").toList())).append('\n');
        }
        if (page.jobs() != null) {
            JobQueueStatus jobs = page.jobs();
            out.append(String.format("job stream: %d waiting, %d handed back (waiting for redelivery), %d in progress, %d redelivered,"
                    + " %d dead letters%n", jobs.waiting(), jobs.handedBack(), jobs.inProgress(), jobs.redelivered(), jobs.deadLetters()));
        } else if (page.jobsUnknown() != null) {
            out.append("job stream: ").append(page.jobsUnknown()).append('\n');
        }
        return out.toString();
    }
}
