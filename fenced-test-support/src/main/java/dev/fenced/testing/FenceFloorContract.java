package dev.fenced.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.FenceFloor;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link FenceFloor} passes: the highest fence stored for a resource, 0 when
 * none is, and nothing stored for another resource counts. A backend's test extends this class and
 * says how a fence is stored; the suite is checked against broken floors in
 * {@code FenceFloorContractSelfTest}.
 */
public abstract class FenceFloorContract {

    /** The floor under test. */
    protected abstract FenceFloor floor();

    /** Stores a protected row fenced at {@code fence} for {@code resource}, as a holder's write would. */
    protected abstract void store(String resource, long fence);

    /** A resource name the backend can scope, e.g. {@code settle:m_<random>}. */
    protected String freshResource() {
        return "settle:m_" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void zeroWhenNothingIsStored() {
        assertThat(floor().highestStoredFence(freshResource())).isZero();
    }

    @Test
    void theHighestFenceStoredForTheResourceWhateverTheOrder() {
        String resource = freshResource();
        store(resource, 12);
        store(resource, 40);
        store(resource, 7);
        assertThat(floor().highestStoredFence(resource)).isEqualTo(40);
    }

    @Test
    void fencesOfAnotherResourceDoNotCount() {
        String resource = freshResource();
        String other = freshResource();
        store(resource, 5);
        store(other, 99);
        assertThat(floor().highestStoredFence(resource)).isEqualTo(5);
        assertThat(floor().highestStoredFence(other)).isEqualTo(99);
    }
}
