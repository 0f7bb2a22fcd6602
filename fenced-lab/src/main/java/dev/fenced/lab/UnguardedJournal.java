package dev.fenced.lab;

import dev.fenced.settlement.JournalLine;
import dev.fenced.settlement.SettlementJournal;
import java.util.List;
import java.util.UUID;

/**
 * The journal's negative control: the same appends, each entering a guard row of its own (a
 * resource no other holder shares), so no append ever waits for or is refused by another holder's.
 * A stale holder's append then lands after the new holder's. Lab only.
 */
final class UnguardedJournal implements SettlementJournal {
    private final SettlementJournal journal;

    UnguardedJournal(SettlementJournal journal) {
        this.journal = journal;
    }

    @Override
    public List<JournalLine> appendMissing(String resource, String merchant, long token, List<JournalLine> candidates, Runnable beforeAppend) {
        return journal.appendMissing("lab-unguarded:" + UUID.randomUUID(), merchant, token, candidates, beforeAppend);
    }

    @Override
    public List<JournalLine> lines(String merchant) {
        return journal.lines(merchant);
    }
}
