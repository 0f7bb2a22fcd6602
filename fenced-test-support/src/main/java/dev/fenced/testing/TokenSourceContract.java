package dev.fenced.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.TokenSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link TokenSource} passes: tokens for a resource strictly increase, are never
 * reused under concurrent callers, and keep increasing for a new instance over the same store (the
 * reason to issue tokens from a durable store at all). A backend's test extends this class; the
 * suite is checked against broken sources in {@code TokenSourceContractSelfTest}.
 */
public abstract class TokenSourceContract {

    /** The source under test. */
    protected abstract TokenSource source();

    /** A new instance over the same store, as a restarted process would build. */
    protected abstract TokenSource reopened();

    protected static String freshResource() {
        return "tokens:" + UUID.randomUUID();
    }

    @Test
    void tokensForAResourceStrictlyIncrease() {
        String resource = freshResource();
        long previous = 0;
        for (int i = 0; i < 500; i++) {
            long token = source().nextToken(resource);
            assertThat(token).as("draw %d", i).isGreaterThan(previous);
            previous = token;
        }
    }

    @Test
    void eightThreadsNeverGetTheSameToken() throws Exception {
        String resource = freshResource();
        int threads = 8;
        int draws = 250;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<Long>>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    List<Long> mine = new ArrayList<>();
                    for (int i = 0; i < draws; i++) {
                        mine.add(source().nextToken(resource));
                    }
                    return mine;
                }));
            }
            Set<Long> all = new HashSet<>();
            for (Future<List<Long>> future : futures) {
                List<Long> mine = future.get(5, TimeUnit.MINUTES);
                for (int i = 1; i < mine.size(); i++) {
                    assertThat(mine.get(i)).as("tokens one thread sees increase").isGreaterThan(mine.get(i - 1));
                }
                all.addAll(mine);
            }
            assertThat(all).as("one token per draw, never reused").hasSize(threads * draws);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aNewInstanceContinuesAboveEveryTokenIssued() {
        String resource = freshResource();
        long last = 0;
        for (int i = 0; i < 20; i++) {
            last = source().nextToken(resource);
        }
        assertThat(reopened().nextToken(resource)).as("after a restart").isGreaterThan(last);
    }
}
