package dev.fenced.jdbc;

import dev.fenced.EpochSource;

/**
 * Epochs for a lease store that issues tokens in epochs (Redis's {@code TokenPolicy.epochs}), from
 * the database sequence {@code fence_epoch_seq} (made by {@link FencedSchema}): one {@code nextval}
 * per resource when it is first acquired and after each time the store may have lost its tokens,
 * never on the usual acquisition. Durable like the sequence: epochs never go back, whatever Redis
 * loses; they are not consecutive for a resource. Thread-safe.
 */
public final class JdbcSequenceEpochSource implements EpochSource {
    private final JdbcSequenceTokenSource sequence;

    JdbcSequenceEpochSource(JdbcSequenceTokenSource sequence) {
        this.sequence = sequence;
    }

    @Override
    public long nextEpoch(String resource) {
        return sequence.nextToken(resource);
    }

    /**
     * Raises the sequence so that every epoch it gives from now on is above {@code epoch}; never
     * lowers it. To make the next epoch's tokens start above a token {@code t}, pass {@code t >>> 24} ({@code TokenPolicy.epochOf(t)} in fenced-redis).
     */
    public void raiseAbove(long epoch) {
        sequence.raiseAbove(epoch);
    }
}
