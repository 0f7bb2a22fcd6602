package dev.fenced.internal;

import java.util.regex.Pattern;

/** Removes secrets from connection strings before they reach a message or a log. */
public final class Redaction {
    private static final Pattern USER_INFO = Pattern.compile("(?<=://)[^/@\\s]*@");
    private static final Pattern PASSWORD_PARAM = Pattern.compile("(?i)(password|pass|pwd)=[^&;\\s]*");

    private Redaction() {
    }

    /**
     * {@code redis://user:secret@host:6379} becomes {@code redis://***@host:6379};
     * {@code jdbc:postgresql://h/db?user=u&password=s} becomes {@code ...&password=***}.
     */
    public static String redactUri(String uri) {
        if (uri == null) {
            return null;
        }
        String withoutUserInfo = USER_INFO.matcher(uri).replaceFirst("***@");
        return PASSWORD_PARAM.matcher(withoutUserInfo).replaceAll("$1=***");
    }
}
