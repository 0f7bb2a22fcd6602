package dev.fenced.sample;

import dev.fenced.FencedExecutor;
import dev.fenced.jdbc.StaleTransactionException;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Spring Boot application that uses only the starter and its properties: {@link LedgerJob} (or,
 * with {@code sample.job=annotation}, {@link AnnotatedLedgerJob}) posts one ledger line per run
 * under a lease, in a transaction the database refuses when a newer holder has entered. Run as a
 * process by {@code SampleApplicationProcessTest}: it runs the job once, prints
 * {@code OUTCOME <status> <token>} and exits 0 when executed, 2 busy, 3 fenced out, 1 failed.
 */
@SpringBootApplication
public class SampleApplication {

    public static void main(String[] args) {
        FencedExecutor.Status status;
        long token;
        try (ConfigurableApplicationContext context = SpringApplication.run(SampleApplication.class, args)) {
            if (context.getEnvironment().getProperty("sample.job", "executor").equals("annotation")) {
                AnnotatedLedgerJob job = context.getBean(AnnotatedLedgerJob.class);
                String account = context.getEnvironment().getProperty("sample.account", "acct_1");
                boolean fenced = context.getEnvironment().getProperty("sample.fenced", Boolean.class, true);
                status = annotatedRun(() -> fenced ? job.post(account) : job.postUnfenced(account));
                token = job.lastToken();
            } else {
                FencedExecutor.Outcome<Long> outcome = context.getBean(LedgerJob.class).post();
                status = outcome.status();
                token = outcome.token();
            }
        }
        System.out.println("OUTCOME " + status + " " + token);
        System.exit(switch (status) {
            case EXECUTED -> 0;
            case BUSY -> 2;
            case FENCED_OUT -> 3;
            case FAILED -> 1;
        });
    }

    /** How an annotated call ended, in the executor's words: a result, null (skipped), or the database's refusal. */
    private static FencedExecutor.Status annotatedRun(java.util.function.Supplier<Long> call) {
        try {
            return call.get() == null ? FencedExecutor.Status.BUSY : FencedExecutor.Status.EXECUTED;
        } catch (StaleTransactionException refused) {
            return FencedExecutor.Status.FENCED_OUT;
        }
    }
}
