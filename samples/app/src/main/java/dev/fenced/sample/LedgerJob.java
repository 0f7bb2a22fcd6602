package dev.fenced.sample;

import dev.fenced.FencedExecutor;
import dev.fenced.spring.SpringFencedTransactions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Posts one line to {@code sample_ledger} under the lease {@code ledger:<account>}: the executor
 * takes the lease and renews it, the transaction enters the fence with the lease's token, so a
 * holder that lost its lease while paused cannot commit.
 */
@Component
public class LedgerJob {
    private final FencedExecutor executor;
    private final SpringFencedTransactions fences;
    private final TransactionTemplate transactions;
    private final JdbcTemplate jdbc;
    private final String account;
    private final boolean fenced;
    private final boolean holdBeforeWrite;

    public LedgerJob(FencedExecutor executor, SpringFencedTransactions fences, TransactionTemplate transactions, JdbcTemplate jdbc,
                     @Value("${sample.account:acct_1}") String account,
                     @Value("${sample.fenced:true}") boolean fenced,
                     @Value("${sample.hold-before-write:false}") boolean holdBeforeWrite) {
        this.executor = executor;
        this.fences = fences;
        this.transactions = transactions;
        this.jdbc = jdbc;
        this.account = account;
        this.fenced = fenced;
        this.holdBeforeWrite = holdBeforeWrite;
    }

    /** One run: the outcome says whether the line was posted, and with which token. */
    public FencedExecutor.Outcome<Long> post() {
        String resource = "ledger:" + account;
        return executor.execute(resource, lease -> {
            if (holdBeforeWrite) {
                holdHere(lease.token());
            }
            return transactions.execute(status -> {
                if (fenced) {
                    fences.enter(resource, lease.token());
                }
                jdbc.update("INSERT INTO sample_ledger (account, token, amount) VALUES (?, ?, ?)", account, lease.token(), 70.25);
                return lease.token();
            });
        });
    }

    /** Says it holds {@code token}, then waits for a line on stdin: the test freezes the whole process here with SIGSTOP, then tells it to go on. */
    static void holdHere(long token) {
        System.out.println("HOLDING " + token);
        System.out.flush();
        awaitGo();
    }

    private static void awaitGo() {
        try {
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
