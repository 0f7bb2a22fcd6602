package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.EpochSource;
import dev.fenced.FenceFloor;
import dev.fenced.TokenSource;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one token choice: what each setting builds, what a policy records, and the mistakes refused before anything connects. */
class TokenPolicyTest {
    private static final FenceFloor FLOOR = resource -> 7;
    private static final EpochSource EPOCHS = resource -> 1;
    private static final TokenSource SOURCE = resource -> 1;

    @Test
    void eachSettingBuildsItsPolicyAndAsksOnlyForWhatItNeeds() {
        for (TokenIssuer issuer : TokenIssuer.values()) {
            List<String> asked = new ArrayList<>();
            TokenPolicy policy = TokenIssuer.ofSetting(issuer.setting()).policy(
                    () -> { asked.add("floor"); return FLOOR; },
                    () -> { asked.add("epochs"); return EPOCHS; },
                    () -> { asked.add("source"); return SOURCE; });
            assertThat(policy.issuer()).isEqualTo(issuer);
            assertThat(asked).as(issuer + " asks for one thing").hasSize(1);
        }
        assertThat(TokenIssuer.REDIS.policy(() -> null, () -> EPOCHS, () -> SOURCE).issuer()).as("no floor: the plain counter")
                .isEqualTo(TokenIssuer.REDIS);
    }

    @Test
    void settingsAreTheDeploymentsWordsAndRecordedNamesStayRedis() {
        assertThat(TokenIssuer.ofSetting(" Database ")).isEqualTo(TokenIssuer.SOURCE);
        assertThat(TokenIssuer.SOURCE.recorded()).isEqualTo("source");
        assertThat(TokenIssuer.settingOf("source")).isEqualTo("database");
        assertThat(TokenIssuer.settingOf("epochs")).isEqualTo("epochs");
        assertThat(TokenIssuer.settingOf("wall-clock")).as("an unknown recorded name is shown as it is").isEqualTo("wall-clock");
        assertThatThrownBy(() -> TokenIssuer.ofSetting("wall-clock")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("must be redis, epochs or database, got wall-clock");
        assertThatThrownBy(() -> TokenIssuer.ofSetting(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void eachPolicyNamesItsIssuerAndRefusesWhatCannotWork() {
        assertThat(TokenPolicy.redisCounter().issuer()).isEqualTo(TokenIssuer.REDIS);
        assertThat(TokenPolicy.redisCounter(FLOOR, 0).issuer()).isEqualTo(TokenIssuer.REDIS);
        assertThat(TokenPolicy.epochs(EPOCHS).issuer()).isEqualTo(TokenIssuer.EPOCHS);
        assertThat(TokenPolicy.durable(SOURCE).issuer()).isEqualTo(TokenIssuer.SOURCE);
        assertThatThrownBy(() -> TokenPolicy.redisCounter(FLOOR, -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reseed margin must not be negative");
        assertThatThrownBy(() -> TokenPolicy.epochs(null)).isInstanceOf(NullPointerException.class);
    }
}
