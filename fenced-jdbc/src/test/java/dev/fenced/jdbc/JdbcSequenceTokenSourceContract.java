package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.TokenSource;
import dev.fenced.testing.TokenSourceContract;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** {@link JdbcSequenceTokenSource} on one database: the token source contract. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcSequenceTokenSourceContract extends TokenSourceContract {
    private HikariDataSource pool;
    private JdbcSequenceTokenSource source;

    protected abstract String jdbcUrl();

    @BeforeAll
    void open() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setMaximumPoolSize(8);
        pool = new HikariDataSource(config);
        FencedSchema.migrate(pool);
        source = JdbcSequenceTokenSource.of(pool);
    }

    @AfterAll
    void close() {
        if (pool != null) {
            pool.close();
        }
    }

    @Override
    protected TokenSource source() {
        return source;
    }

    @Override
    protected TokenSource reopened() {
        return JdbcSequenceTokenSource.of(pool);
    }

    /** Draws from two processes (two pools), alternating: each is above every draw made before it, whichever process made it. */
    protected static List<Long> alternating(String url, String sequence, int draws) {
        try (HikariDataSource one = pool(url); HikariDataSource two = pool(url)) {
            TokenSource first = JdbcSequenceTokenSource.of(one, sequence);
            TokenSource second = JdbcSequenceTokenSource.of(two, sequence);
            String resource = freshResource();
            List<Long> tokens = new ArrayList<>();
            for (int i = 0; i < draws; i++) {
                tokens.add((i % 2 == 0 ? first : second).nextToken(resource));
            }
            return tokens;
        }
    }

    protected static long outOfOrder(List<Long> tokens) {
        long count = 0;
        for (int i = 1; i < tokens.size(); i++) {
            if (tokens.get(i) <= tokens.get(i - 1)) {
                count++;
            }
        }
        return count;
    }

    private static HikariDataSource pool(String url) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(1);
        return new HikariDataSource(config);
    }

    @Test
    void aLaterDrawIsHigherWhicheverProcessMakesIt() {
        assertThat(outOfOrder(alternating(jdbcUrl(), JdbcSequenceTokenSource.DEFAULT_SEQUENCE, 200))).isZero();
    }

    /** The epochs of Redis-issued tokens: their own sequence, made by the migrations, rising whichever process draws. */
    @Test
    void epochsRiseFromTheirOwnSequence() {
        List<Long> epochs = alternating(jdbcUrl(), JdbcSequenceTokenSource.EPOCH_SEQUENCE, 40);
        assertThat(outOfOrder(epochs)).isZero();
        assertThat(epochs.get(0)).isPositive().isLessThan(1L << 39);
        long epoch = JdbcSequenceTokenSource.epochs(pool).nextEpoch(freshResource());
        long token = JdbcSequenceTokenSource.of(pool).nextToken(freshResource());
        assertThat(JdbcSequenceTokenSource.epochs(pool).nextEpoch(freshResource())).as("a token drawn between does not move the epochs")
                .isEqualTo(epoch + 1);
        assertThat(token).isPositive();
    }
}
