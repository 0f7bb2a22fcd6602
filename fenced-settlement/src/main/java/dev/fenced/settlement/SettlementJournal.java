package dev.fenced.settlement;

import java.util.List;
import javax.sql.DataSource;

/**
 * A second store the settlement worker writes: one journal line per confirmed refund. At the end of
 * each run the worker appends the lines its merchant's confirmed refunds lack, in one transaction
 * of the journal's store fenced with the run's token ({@link dev.fenced.jdbc.FencedTransactions}),
 * so a stale holder's append is refused once a newer holder has entered, and a newer holder's
 * append waits for a stale one already under way and then sees its lines. A run that stopped
 * before its append (crash, pause) leaves the lines to the next run of the merchant.
 *
 * <p>What it does not promise: the journal lags the refund rows until the run that confirmed them
 * (or the next one) ends; it is not written in the refund table's transaction.
 */
public interface SettlementJournal {
    /**
     * In one transaction entered under {@code token} for {@code resource}: reads which of
     * {@code candidates} (confirmed refunds of {@code merchant}) already have a line, and appends
     * the others with {@code writtenBy = token}. Returns the lines appended.
     *
     * @throws dev.fenced.FenceViolation when a newer token has entered; nothing was appended
     */
    List<JournalLine> appendMissing(String resource, String merchant, long token, List<JournalLine> candidates, Runnable beforeAppend);

    /** Every line of {@code merchant}, in the order they were appended. */
    List<JournalLine> lines(String merchant);

    /** The journal in {@code dataSource}'s {@code settlement_journal} (see {@link JournalSchema}). */
    static SettlementJournal in(DataSource dataSource) {
        return new JdbcJournal(dataSource);
    }
}
