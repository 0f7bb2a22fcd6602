package dev.fenced.sample;

import dev.fenced.spring.FencedContext;
import dev.fenced.spring.FencedLock;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link LedgerJob} with the annotation instead of the executor: the lease is the method's, its
 * token in {@link FencedContext}, and the transaction begun inside enters the guard with it. The
 * unfenced method is the control: the same job with the guard off.
 */
@Component
public class AnnotatedLedgerJob {
    private final TransactionTemplate transactions;
    private final JdbcTemplate jdbc;
    private final boolean holdBeforeWrite;
    /** The token of the last run that took the lease, for the sample's last line. */
    private final AtomicLong lastToken = new AtomicLong();

    public AnnotatedLedgerJob(TransactionTemplate transactions, JdbcTemplate jdbc,
                              @Value("${sample.hold-before-write:false}") boolean holdBeforeWrite) {
        this.transactions = transactions;
        this.jdbc = jdbc;
        this.holdBeforeWrite = holdBeforeWrite;
    }

    /** Posts one line under the lease {@code ledger:<account>}; null when another holder has it. */
    @FencedLock(resource = "ledger:#{#account}")
    public Long post(String account) {
        return postUnderTheLease(account);
    }

    @FencedLock(resource = "ledger:#{#account}", guard = false)
    public Long postUnfenced(String account) {
        return postUnderTheLease(account);
    }

    public long lastToken() {
        return lastToken.get();
    }

    private Long postUnderTheLease(String account) {
        long token = FencedContext.token();
        lastToken.set(token);
        if (holdBeforeWrite) {
            LedgerJob.holdHere(token);
        }
        return transactions.execute(status -> {
            jdbc.update("INSERT INTO sample_ledger (account, token, amount) VALUES (?, ?, ?)", account, token, 70.25);
            return token;
        });
    }
}
