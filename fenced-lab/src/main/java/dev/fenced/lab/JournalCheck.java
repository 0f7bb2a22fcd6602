package dev.fenced.lab;

import dev.fenced.settlement.JournalLine;
import dev.fenced.settlement.SettlementJournal;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The settlement journal (the second store) against the refund rows, which {@link GatewayCrossCheck}
 * holds against the gateway's ledger: one line per sent refund, carrying the row's fence (the token
 * that confirmed it) and its gateway reference; no line for a refund not sent; and per merchant,
 * lines in the order of the tokens that wrote them, since the guard makes an older token's append
 * commit before a newer token's begins. Each check counts the lines or refunds that break it.
 */
final class JournalCheck {
    private JournalCheck() {
    }

    static Map<String, Long> check(DataSource journal, Collection<String> merchants, List<GatewayCrossCheck.Row> rows) {
        Map<String, GatewayCrossCheck.Row> byKey = rows.stream().collect(Collectors.toMap(GatewayCrossCheck.Row::refundKey, Function.identity()));
        SettlementJournal lines = SettlementJournal.in(journal);
        long notOnce = 0;
        long notSent = 0;
        long notTheRows = 0;
        long stale = 0;
        for (String merchant : merchants) {
            List<JournalLine> mine = lines.lines(merchant);
            Map<String, Long> perRefund = mine.stream().collect(Collectors.groupingBy(JournalLine::refundId, Collectors.counting()));
            notOnce += rows.stream().filter(r -> r.merchant().equals(merchant) && r.confirmed())
                    .filter(r -> perRefund.getOrDefault(r.id(), 0L) != 1).count();
            long newest = Long.MIN_VALUE;
            for (JournalLine line : mine) {
                GatewayCrossCheck.Row row = byKey.get(merchant + "/" + line.refundId());
                if (row == null || !row.confirmed()) {
                    notSent++;
                } else if (line.token() != row.fence() || !line.gatewayReference().equals(row.gatewayReference())) {
                    notTheRows++;
                }
                if (line.writtenBy() < newest) {
                    stale++;
                }
                newest = Math.max(newest, line.writtenBy());
            }
        }
        Map<String, Long> checks = new LinkedHashMap<>();
        checks.put("journal: sent refunds without exactly one line", notOnce);
        checks.put("journal: lines for refunds not sent", notSent);
        checks.put("journal: lines whose token or gateway reference is not the row's", notTheRows);
        checks.put("journal: lines a stale token appended after a newer token's", stale);
        return checks;
    }
}
