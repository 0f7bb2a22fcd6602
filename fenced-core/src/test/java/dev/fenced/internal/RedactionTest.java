package dev.fenced.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RedactionTest {
    @Test
    void removesUserInfoFromRedisUris() {
        assertThat(Redaction.redactUri("rediss://app:s3cret@cache:6380/0")).isEqualTo("rediss://***@cache:6380/0");
        assertThat(Redaction.redactUri("redis://:s3cret@cache:6379")).isEqualTo("redis://***@cache:6379");
        assertThat(Redaction.redactUri("redis://cache:6379")).isEqualTo("redis://cache:6379");
    }

    @Test
    void removesPasswordParametersFromJdbcUrls() {
        assertThat(Redaction.redactUri("jdbc:postgresql://db/test?user=u&password=s3cret&ssl=true"))
                .isEqualTo("jdbc:postgresql://db/test?user=u&password=***&ssl=true")
                .doesNotContain("s3cret");
        assertThat(Redaction.redactUri("jdbc:mariadb://u:s3cret@db/test")).doesNotContain("s3cret");
    }
}
