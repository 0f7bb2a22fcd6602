package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

class RedisKeysTest {

    @Test
    void withoutAPrefixTheKeysAreTheOnesDeployedDataHas() {
        // Spelled out on purpose: existing leases and counters live under exactly these names.
        assertThat(RedisKeys.DEFAULT.lockKey("merchant:42")).isEqualTo("lock:{merchant:42}");
        assertThat(RedisKeys.DEFAULT.fenceKey("merchant:42")).isEqualTo("fence:{merchant:42}");
        assertThat(RedisKeys.DEFAULT.prefix()).isEmpty();
        assertThat(RedisKeys.withPrefix("")).isSameAs(RedisKeys.DEFAULT);
    }

    @Test
    void aPrefixGoesBeforeEachKey() {
        RedisKeys app1 = RedisKeys.withPrefix("app1:");
        assertThat(app1.lockKey("r")).isEqualTo("app1:lock:{r}");
        assertThat(app1.fenceKey("r")).isEqualTo("app1:fence:{r}");
        assertThat(app1.prefix()).isEqualTo("app1:");
        assertThat(app1).isEqualTo(RedisKeys.withPrefix("app1:")).isNotEqualTo(RedisKeys.DEFAULT);
        assertThat(app1.toString()).contains("app1:lock:{resource}");
    }

    @Test
    void bothKeysOfAResourceAreInTheResourcesClusterSlot() {
        for (RedisKeys keys : new RedisKeys[] {RedisKeys.DEFAULT, RedisKeys.withPrefix("app1:"), RedisKeys.withPrefix("x".repeat(64))}) {
            for (String resource : new String[] {"r", "merchant:42", "orders/2024-06"}) {
                assertThat(SlotHash.getSlot(keys.lockKey(resource))).as("%s %s", keys, resource)
                        .isEqualTo(SlotHash.getSlot(keys.fenceKey(resource)))
                        .isEqualTo(SlotHash.getSlot(resource));
            }
        }
    }

    @Test
    void negativeControl_aBraceInThePrefixWouldSplitAResourcesKeysAcrossSlots() {
        // Why withPrefix refuses braces: the hash tag becomes "b:lock:{orders" and "b:fence:{orders".
        assertThat(SlotHash.getSlot("a{b:lock:{orders}")).isNotEqualTo(SlotHash.getSlot("a{b:fence:{orders}"));
        assertThatThrownBy(() -> RedisKeys.withPrefix("a{b:")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key prefix 'a{b:'").hasMessageContaining("'{' at index 1");
    }

    @Test
    void invalidPrefixesAreRefusedWithAMessageNamingThem() {
        assertThatThrownBy(() -> RedisKeys.withPrefix(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not be null");
        assertThatThrownBy(() -> RedisKeys.withPrefix("x".repeat(65))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is 65 characters long; the limit is 64");
        assertThatThrownBy(() -> RedisKeys.withPrefix("app}:")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'app}:' contains '}' at index 3");
        assertThatThrownBy(() -> RedisKeys.withPrefix("my app:")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'my app:' contains ' ' at index 2");
        assertThatThrownBy(() -> RedisKeys.withPrefix("app\u0000:")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'app\\u0000:' contains '\\u0000' at index 3");
        assertThatThrownBy(() -> RedisKeys.withPrefix("app\u00a0:")).as("a no-break space")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'app\\u00a0:'");
        assertThat(RedisKeys.withPrefix("tenant-7/ünï:").lockKey("r")).as("other characters are fine")
                .isEqualTo("tenant-7/ünï:lock:{r}");
    }

    @Test
    void aResourceNameTheStoreWouldRefuseGetsNoKey() {
        assertThatThrownBy(() -> RedisKeys.DEFAULT.lockKey("a}b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("braces");
        assertThatThrownBy(() -> RedisKeys.withPrefix("app1:").fenceKey(null)).isInstanceOf(IllegalArgumentException.class);
    }
}
