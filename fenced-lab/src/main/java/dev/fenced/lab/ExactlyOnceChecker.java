package dev.fenced.lab;

import dev.fenced.cli.EventLine;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.settlement.SettlementEvent.Type;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The chaos run's verdict: every refund created exactly once at the gateway and sent in the
 * database with the same key, merchant, amount and id ({@link GatewayCrossCheck}); nothing for
 * {@code fenced reconcile} to report; no refund confirmed twice or under a token other than its
 * row's; every merchant's grants with rising tokens, none granted twice; every job acked or dead-lettered, none lost
 * by the broker; the journal, a second store, with one line per sent refund ({@link JournalCheck}). It judges what the run left behind, after the drain; it cannot tell a violation
 * that left no trace.
 */
final class ExactlyOnceChecker {
    /** A deployment's database, the merchants it settled, and its journal's database (null: none). */
    record Deployment(DataSource db, Collection<String> merchants, DataSource journal) {
    }

    /**
     * @param refunds rows checked, in every deployment
     * @param checks each check and how many refunds break it, in the report's order
     * @param violations the checks' counts that are violations, summed
     */
    record Findings(int refunds, Map<String, Long> checks, long violations, String verdict) {
    }

    private final boolean fencing;
    private final boolean providerNews;

    /**
     * @param fencing false for a negative control (fencing off, or workers trusting forgotten keys): its verdict expects violations
     * @param providerNews whether the provider reported each refund's final word: every confirmed row must then carry it */
    ExactlyOnceChecker(boolean fencing, boolean providerNews) {
        this.fencing = fencing;
        this.providerNews = providerNews;
    }

    Findings check(List<Deployment> deployments, String gatewayUrl, List<GatewayRefund> ledger, List<EventLine> history, ChaosReport.Jobs jobs)
            throws SQLException {
        List<GatewayCrossCheck.Row> rowList = new ArrayList<>();
        long reconcileDiscrepancies = 0;
        Map<String, Long> journalChecks = new LinkedHashMap<>();
        for (Deployment deployment : deployments) {
            List<GatewayCrossCheck.Row> deployed = GatewayCrossCheck.rows(deployment.db());
            rowList.addAll(deployed);
            reconcileDiscrepancies += GatewayCrossCheck.reconcile(deployment.db(), gatewayUrl, deployment.merchants());
            if (deployment.journal() != null) {
                JournalCheck.check(deployment.journal(), deployment.merchants(), deployed)
                        .forEach((check, count) -> journalChecks.merge(check, count, Long::sum));
            }
        }
        Map<String, GatewayCrossCheck.Row> rows = rowList.stream().collect(Collectors.toMap(GatewayCrossCheck.Row::refundKey, r -> r));
        Map<String, Long> moneyChecks = GatewayCrossCheck.check(rowList, ledger);
        if (providerNews) {
            moneyChecks.putAll(GatewayCrossCheck.finalWord(rowList, ledger));
        }

        Map<String, List<EventLine.Event>> confirms = events(history, Type.CONFIRMED).stream()
                .collect(Collectors.groupingBy(e -> e.merchant() + "/" + e.refund()));
        long confirmedTwice = confirms.values().stream().filter(l -> l.size() > 1).count();
        long confirmedByAnotherToken = confirms.entrySet().stream().filter(e -> {
            GatewayCrossCheck.Row row = rows.get(e.getKey());
            return row != null && e.getValue().stream().anyMatch(c -> c.token() != row.fence());
        }).count();
        List<EventLine.Event> grants = events(history, Type.ACQUIRED);
        long tokensRepeated = tokensRepeated(grants);
        long tokensNotRising = tokensNotRising(grants);
        long violations = moneyChecks.values().stream().mapToLong(Long::longValue).sum() + reconcileDiscrepancies + confirmedTwice
                + confirmedByAnotherToken + tokensRepeated + tokensNotRising + jobs.lost() + jobs.unfinished()
                + journalChecks.values().stream().mapToLong(Long::longValue).sum();

        Map<String, Long> checks = new LinkedHashMap<>(moneyChecks);
        checks.put("discrepancies fenced reconcile reports", reconcileDiscrepancies);
        checks.put("refunds confirmed more than once", confirmedTwice);
        checks.put("refunds confirmed by a token other than the row's", confirmedByAnotherToken);
        checks.put("grants of a token the merchant was granted before", tokensRepeated);
        checks.put("grants whose token did not increase", tokensNotRising);
        checks.put("jobs lost by the broker (gone, neither acked nor dead-lettered)", (long) jobs.lost());
        checks.put("jobs still queued or in progress at the end", (long) jobs.unfinished());
        checks.putAll(journalChecks);
        return new Findings(rows.size(), checks, violations, verdict(violations));
    }

    /**
     * Per merchant: grants of a token another grant already had. Whenever a counter goes back and is
     * used again it hands out tokens it handed out before, so this is the trace of every token that
     * went back, and, unlike the order of events from several processes, it does not depend on when
     * a process got around to reporting its grant.
     */
    private static long tokensRepeated(List<EventLine.Event> grants) {
        return grants.stream().collect(Collectors.groupingBy(e -> e.merchant() + "/" + e.token(), Collectors.counting())).values().stream()
                .mapToLong(count -> count - 1).sum();
    }

    /**
     * Per merchant: grants whose token is not above a token another grant had reported before this
     * grant was even asked for. Events from several processes do not arrive in grant order (a
     * process frozen between its grant and its report reports late), so the order used is the
     * exact one: a grant reported at t was granted before t, and a grant asked for after t cannot
     * have been granted before it. The ask time is the event's time less the acquisition's
     * duration in its detail ({@code "settle:m_1 in 3 ms"}).
     */
    private static long tokensNotRising(List<EventLine.Event> grants) {
        long count = 0;
        for (List<EventLine.Event> merchant : grants.stream().collect(Collectors.groupingBy(e -> String.valueOf(e.merchant()))).values()) {
            for (EventLine.Event later : merchant) {
                long asked = askedAt(later);
                if (merchant.stream().anyMatch(earlier -> earlier.at() < asked && earlier.token() >= later.token())) {
                    count++;
                }
            }
        }
        return count;
    }

    private static final java.util.regex.Pattern TOOK = java.util.regex.Pattern.compile(" in (\\d+) ms$");

    /** When the worker asked for the lease it reports: the event's time less the acquisition's duration. */
    static long askedAt(EventLine.Event grant) {
        java.util.regex.Matcher took = grant.detail() == null ? null : TOOK.matcher(grant.detail());
        return took != null && took.find() ? grant.at() - Long.parseLong(took.group(1)) : grant.at();
    }

    private String verdict(long violations) {
        if (fencing) {
            return violations == 0 ? "exactly once: no violation" : violations + " VIOLATIONS";
        }
        return violations > 0 ? "negative control: " + violations + " violations without the protection it switched off, as it must"
                : "negative control found no violation: this scenario proved nothing; run longer, or with more faults";
    }

    private static List<EventLine.Event> events(List<EventLine> history, Type type) {
        return history.stream().filter(Events.ofType(type)).map(EventLine.Event.class::cast).toList();
    }
}
