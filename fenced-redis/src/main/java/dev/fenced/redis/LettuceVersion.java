package dev.fenced.redis;

import io.lettuce.core.RedisClient;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Lettuce versions fenced-redis supports: 6.6 and later 6.x (Spring Boot 3.5 manages 6.6, Boot
 * 4.0 manages 6.8; both run in CI as sample applications) and 7.x (what fenced itself is built and
 * tested on). Older 6.x lines were never run; 5.x and 8 are refused.
 */
public final class LettuceVersion {
    public static final String SUPPORTED = "6.6 to 7.x";
    private static final String POM_PROPERTIES = "META-INF/maven/io.lettuce/lettuce-core/pom.properties";
    private static final Pattern MAJOR_MINOR = Pattern.compile("^(\\d+)\\.(\\d+)");

    private LettuceVersion() {
    }

    /**
     * The Lettuce on the class path, from the Maven metadata its jar carries (a shaded jar keeps it,
     * while its manifest is the shading application's); null when there is none to read.
     */
    public static String onClassPath() {
        try (InputStream in = RedisClient.class.getClassLoader().getResourceAsStream(POM_PROPERTIES)) {
            if (in == null) {
                return null;
            }
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version");
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Returns when {@code version} ({@code 6.8.2.RELEASE/34f8700}, say) is supported, or when it is
     * null or unreadable (a shaded or repackaged Lettuce: nothing to judge by).
     *
     * @throws UnsupportedLettuceVersionException for a version outside {@value #SUPPORTED}
     */
    public static void requireSupported(String version) {
        if (version == null) {
            return;
        }
        Matcher matcher = MAJOR_MINOR.matcher(version);
        if (!matcher.find()) {
            return;
        }
        int major = Integer.parseInt(matcher.group(1));
        int minor = Integer.parseInt(matcher.group(2));
        boolean supported = (major == 6 && minor >= 6) || major == 7;
        if (!supported) {
            throw new UnsupportedLettuceVersionException(version);
        }
    }
}
