package dev.fenced.jdbc;

import dev.fenced.LeaseArguments;
import dev.fenced.TokenSource;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Tokens from one database sequence ({@code fence_token_seq}, made by {@link FencedSchema}) for
 * every resource: one {@code nextval} per token, with no row to lock. Durable like
 * {@link JdbcTokenSource} (a sequence never goes back, and survives the loss of Redis), and
 * cheaper (measured before the wait that follows); on PostgreSQL each value's commit waits for a synchronous standby, so that a failover
 * cannot hand it out again, and a value reported with a warning (such a wait cancelled) is refused
 * with {@link GrantInDoubtException}. Tokens strictly increase per resource because they strictly
 * increase over all of them; they are not consecutive for a resource.
 *
 * <p>Switching a running system from another token source: raise the sequence above every stored
 * fence first ({@code SELECT setval('fence_token_seq', <max fence>)} on PostgreSQL,
 * {@code SELECT SETVAL(fence_token_seq, <max fence>)} on MariaDB), or the first tokens would be
 * refused. Thread-safe.
 */
public final class JdbcSequenceTokenSource implements TokenSource {
    public static final String DEFAULT_SEQUENCE = "fence_token_seq";
    /** The sequence of {@link #epochs(DataSource)}. */
    public static final String EPOCH_SEQUENCE = "fence_epoch_seq";

    /**
     * How long a draw waits for its commit (on PostgreSQL, for the synchronous standby) before the
     * driver cancels it; a cancelled wait comes back with a warning, and the value is refused.
     */
    static final int DRAW_WAIT_SECONDS = 10;

    private final DataSource dataSource;
    private final DetectedDialect detected = new DetectedDialect();
    private final String sequence;
    private final int drawWaitSeconds;

    private JdbcSequenceTokenSource(DataSource dataSource, String sequence, int drawWaitSeconds) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.sequence = SqlIdentifiers.table("sequence", sequence);
        this.drawWaitSeconds = drawWaitSeconds;
    }

    /** Tokens from {@code fence_token_seq}. */
    public static JdbcSequenceTokenSource of(DataSource dataSource) {
        return new JdbcSequenceTokenSource(dataSource, DEFAULT_SEQUENCE, DRAW_WAIT_SECONDS);
    }

    /** Epochs for Redis-issued tokens, from {@code fence_epoch_seq}: see {@link JdbcSequenceEpochSource}. */
    public static JdbcSequenceEpochSource epochs(DataSource dataSource) {
        return epochs(dataSource, DRAW_WAIT_SECONDS);
    }

    /** {@link #epochs(DataSource)} whose draws wait {@code drawWaitSeconds} at most: for tests. */
    static JdbcSequenceEpochSource epochs(DataSource dataSource, int drawWaitSeconds) {
        return new JdbcSequenceEpochSource(new JdbcSequenceTokenSource(dataSource, EPOCH_SEQUENCE, drawWaitSeconds));
    }

    /** Tokens from a sequence of your own; it must not cache values per session. */
    public static JdbcSequenceTokenSource of(DataSource dataSource, String sequence) {
        return new JdbcSequenceTokenSource(dataSource, sequence, DRAW_WAIT_SECONDS);
    }

    /**
     * Raises the sequence so that every value it issues from now on is above {@code floor}; never
     * lowers it. For switching a resource to this source.
     */
    public void raiseAbove(long floor) {
        if (floor < 0) {
            throw new IllegalArgumentException("floor must not be negative, got " + floor);
        }
        AutoCommitWork.run(dataSource, sequence, connection -> {
            JdbcDialect dialect = null;
            try {
                dialect = detected.of(connection);
                dialect.raiseSequenceAbove(connection, sequence, floor);
                return null;
            } catch (SQLException e) {
                throw SqlErrors.translate(dialect, "raising " + sequence + " above " + floor, e);
            }
        });
    }

    @Override
    public long nextToken(String resource) {
        LeaseArguments.requireValidResource(resource);
        // In auto-commit whatever the pool hands out: a draw left in an open transaction would be rolled back, never
        // committed, and would wait for no standby.
        return AutoCommitWork.run(dataSource, sequence, connection -> {
            JdbcDialect dialect = null;
            try {
                dialect = detected.of(connection);
                try (PreparedStatement statement = connection.prepareStatement(dialect.nextValueQuery(sequence))) {
                    statement.setQueryTimeout(drawWaitSeconds);
                    long value;
                    try (ResultSet rs = statement.executeQuery()) {
                        rs.next();
                        value = rs.getLong(1);
                    }
                    // Above all a commit whose wait for a synchronous standby was cancelled (by the timeout above): reported
                    // as made, it "might not have been replicated", and a failover could hand the value out again.
                    GrantInDoubtException.requireNoWarning(statement, "a token for " + resource + " from " + sequence + " came", "");
                    return value;
                }
            } catch (SQLException e) {
                throw SqlErrors.translate(dialect, "issuing a token for " + resource + " from " + sequence, e);
            }
        });
    }
}
