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

    /** The everyday local URL: its password is also its user's name and part of its scheme, and only the password is masked. */
    @Test
    void anOrdinaryPasswordIsMaskedWhereItStandsOnly() {
        String url = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres&password=postgres";
        String message = "database at jdbc:postgresql://127.0.0.1:5432/test is unreachable: FATAL: password authentication failed"
                + " for user \"postgres\" (url " + url + ", password=postgres)";
        assertThat(Redaction.scrub(message, Redaction.secretsOf(url))).isEqualTo("database at jdbc:postgresql://127.0.0.1:5432/test is"
                + " unreachable: FATAL: password authentication failed for user \"postgres\""
                + " (url jdbc:postgresql://127.0.0.1:5432/test?user=postgres&password=***, password=***)");
    }

    @Test
    void anOrdinaryPasswordIsMaskedInUserInfoAndInEveryPasswordParameter() {
        var secrets = Redaction.secretsOf("jdbc:postgresql://postgres:postgres@127.0.0.1:5432/test");
        assertThat(Redaction.scrub("jdbc:postgresql://postgres:postgres@127.0.0.1:5432/test user postgres", secrets))
                .isEqualTo("jdbc:postgresql://postgres:***@127.0.0.1:5432/test user postgres");
        assertThat(Redaction.scrub("PASSWORD=postgres pwd=postgres; token=postgres&x secret=postgresql", secrets))
                .isEqualTo("PASSWORD=*** pwd=***; token=***&x secret=postgresql");
        assertThat(Redaction.scrub("redis-sentinel://s3cret.pw@h:26379#m and s3cret.pw",
                Redaction.secretsOf("redis-sentinel://s3cret.pw@h:26379,h:26380#m"))).isEqualTo("redis-sentinel://***@h:26379#m and s3cret.pw");
        assertThat(Redaction.scrub("pass=a~b pass=a%7Eb", Redaction.secretsOf("jdbc:mariadb://h/db?user=u&pass=a~b&ssl=true")))
                .isEqualTo("pass=*** pass=***");
    }

    /** What a driver may take for part of the password, or split at, keeps the password masked everywhere, as its pieces. */
    @Test
    void aPasswordADriverMayMisreadIsMaskedEverywhere() {
        assertThat(Redaction.scrub("Incorrect port value : s3cret, and s3cret", Redaction.secretsOf("jdbc:mariadb://root:s3cret/@word@h/x")))
                .doesNotContain("s3cret");
        assertThat(Redaction.scrub("unknown property b, host postgres", Redaction.secretsOf("jdbc:postgresql://h/x?password=postgres&b")))
                .doesNotContain("postgres");
        assertThat(Redaction.scrub("user postgres%", Redaction.secretsOf("jdbc:postgresql://postgres%@h/x"))).doesNotContain("postgres");
    }

    @Test
    void aSecretNeverPrintsItself() {
        assertThat(Redaction.secretsOf("redis://:hunter2@h").toString()).doesNotContain("hunter2");
        assertThat(Redaction.secretsOf("redis://:hunter2/@h").toString()).doesNotContain("hunter2");
    }
}
