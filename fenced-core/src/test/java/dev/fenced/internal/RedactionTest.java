package dev.fenced.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class RedactionTest {
    @Test
    void removesUserInfoFromRedisUris() {
        assertThat(Redaction.redactUri("rediss://app:s3cret@cache:6380/0")).isEqualTo("rediss://***@cache:6380/0");
        assertThat(Redaction.redactUri("redis://:s3cret@cache:6379")).isEqualTo("redis://***@cache:6379");
        assertThat(Redaction.redactUri("redis://cache:6379")).isEqualTo("redis://cache:6379");
    }

    @Test
    void removesPasswordParametersAndEverythingAfterThem() {
        assertThat(Redaction.redactUri("jdbc:postgresql://db/test?user=u&password=s3cret&ssl=true"))
                .isEqualTo("jdbc:postgresql://db/test?user=u&password=***");
        assertThat(Redaction.redactUri("jdbc:postgresql://db/test?user=u&password=a&b")).doesNotContain("&b");
        assertThat(Redaction.redactUri("jdbc:mariadb://u:s3cret@db/test")).doesNotContain("s3cret");
    }

    /** Passwords that break a naive pattern: a slash, an at sign, a space, an ampersand. */
    @Test
    void hostilePasswordsNeverSurvive() {
        for (String password : List.of("pa/ss@w rd", "a&b;c:d%zz", "'\"<>", "p@ss@word", "密码/@ x")) {
            for (String url : List.of("redis://:" + password + "@cache:6379/0", "redis://user:" + password + "@cache:6379",
                    "jdbc:postgresql://h:5432/db?user=u&password=" + password, "jdbc:mariadb://u:" + password + "@h/db",
                    "http://op:" + password + "@127.0.0.1:8080")) {
                assertThat(Redaction.redactUri(url)).as(url).doesNotContain(password);
                assertThat(Redaction.describe(url)).as(url).doesNotContain(password).doesNotContain("***");
                String driverMessage = "could not connect to " + url + " (host " + password + ")";
                assertThat(Redaction.scrub(driverMessage, Redaction.secretsOf(url))).as(url).doesNotContain(password);
            }
        }
    }

    @Test
    void describesAConnectionByItsHostsAndDatabaseOnly() {
        assertThat(Redaction.describe("jdbc:postgresql://u:pw@db:5432/test?user=x&password=y")).isEqualTo("jdbc:postgresql://db:5432/test");
        assertThat(Redaction.describe("redis-sentinel://pw@127.0.0.1:26379,127.0.0.1:26380/0#mymaster"))
                .isEqualTo("redis-sentinel://127.0.0.1:26379,127.0.0.1:26380/0");
        assertThat(Redaction.describe(null)).isEqualTo("(no URL)");
    }

    @Test
    void percentEncodedPasswordsAreScrubbedInBothForms() {
        String url = "redis://:p%40ss%2Fword@cache:6379";
        String text = "AUTH p@ss/word failed; url p%40ss%2Fword";
        assertThat(Redaction.scrub(text, Redaction.secretsOf(url))).doesNotContain("p@ss/word").doesNotContain("p%40ss%2Fword");
    }
}
