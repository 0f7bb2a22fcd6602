package dev.fenced.sample;

import dev.fenced.FencedExecutor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Spring Boot application that uses only the starter and its properties: {@link LedgerJob}
 * posts one ledger line per run under a lease, in a transaction the database refuses when a newer
 * holder has entered. Run as a process by {@code SampleApplicationProcessTest}: it runs the job
 * once, prints {@code OUTCOME <status> <token>} and exits 0 when executed, 2 busy, 3 fenced out, 1 failed.
 */
@SpringBootApplication
public class SampleApplication {

    public static void main(String[] args) {
        int code;
        try (ConfigurableApplicationContext context = SpringApplication.run(SampleApplication.class, args)) {
            FencedExecutor.Outcome<Long> outcome = context.getBean(LedgerJob.class).post();
            System.out.println("OUTCOME " + outcome.status() + " " + outcome.token());
            code = switch (outcome.status()) {
                case EXECUTED -> 0;
                case BUSY -> 2;
                case FENCED_OUT -> 3;
                case FAILED -> 1;
            };
        }
        System.exit(code);
    }
}
