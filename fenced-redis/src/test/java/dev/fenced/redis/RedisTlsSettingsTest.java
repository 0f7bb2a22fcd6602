package dev.fenced.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one rule by which the command line and the starter turn their TLS settings into {@link RedisTls}. */
class RedisTlsSettingsTest {

    @Test
    void noSettingAndFullVerificationIsNoTlsSettings() {
        assertThat(RedisTls.fromSettings(null, null, null, RedisTls.Verify.FULL, "--cert", "--key")).isEmpty();
        assertThat(RedisTls.fromSettings(null, null, null, RedisTls.Verify.CA, "--cert", "--key")).get()
                .extracting(RedisTls::verify).isEqualTo(RedisTls.Verify.CA);
    }

    @Test
    void aCertificateAndItsKeyGoTogetherNamedAsTheCallerNamesThem(@TempDir Path dir) throws IOException {
        Path pem = Files.writeString(dir.resolve("client.pem"), "not checked before connecting");
        assertThatThrownBy(() -> RedisTls.fromSettings(null, pem, null, RedisTls.Verify.FULL, "--redis-tls-cert", "--redis-tls-key"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("--redis-tls-cert and --redis-tls-key go together");
        assertThatThrownBy(() -> RedisTls.fromSettings(null, null, pem, RedisTls.Verify.FULL, "fenced.redis.tls.cert-file",
                "fenced.redis.tls.key-file")).hasMessage("fenced.redis.tls.cert-file and fenced.redis.tls.key-file go together");
        assertThat(RedisTls.fromSettings(pem, pem, pem, RedisTls.Verify.FULL, "--cert", "--key")).isPresent();
        assertThatThrownBy(() -> RedisTls.fromSettings(dir.resolve("missing.pem"), null, null, RedisTls.Verify.FULL, "--cert", "--key"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("missing.pem");
    }
}
