package dev.fenced.internal;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps secrets out of messages and logs, by construction: a message names a connection by
 * {@link #describe(String)} (scheme, hosts, port, database; never user-info or a query), and any
 * other text that may repeat a URL (a driver's error) goes through {@link #scrub} with the secrets
 * {@link #secretsOf(String)} found in the configured URLs.
 *
 * <p>Passwords may hold any character ({@code / @ & ; : % space}, quotes, unicode), raw or
 * percent-encoded, so nothing here relies on a password being well-formed: user-info runs to the
 * last {@code @}, a password parameter to the end of the URL, and the pieces of a password between
 * URL delimiters are secrets too (of four characters or more), since a driver that misreads the URL
 * repeats a piece.
 */
public final class Redaction {
    private static final Pattern PASSWORD_PARAM = Pattern.compile("(?i)([?&;](?:password|pass|pwd|secret|token)=).*$");
    private static final String MASK = "***";
    /** Shorter candidates would mask ordinary words in a message; such a password is masked where it stands in a URL only. */
    private static final int MIN_SECRET = 3;
    /** A driver that misparses a URL repeats the piece of a password up to a delimiter ("Incorrect port value : s3cret"). */
    private static final Pattern DELIMITERS = Pattern.compile("[/@:?#&;=\\s]+");
    private static final int MIN_FRAGMENT = 4;

    private Redaction() {
    }

    /**
     * The URL without its secrets: {@code redis://user:secret@host:6379} becomes
     * {@code redis://***@host:6379}; {@code jdbc:postgresql://h/db?user=u&password=s&ssl=true}
     * becomes {@code jdbc:postgresql://h/db?user=u&password=***} (everything after a password is
     * dropped, since a password may hold an {@code &}).
     */
    public static String redactUri(String uri) {
        if (uri == null) {
            return null;
        }
        int start = uri.indexOf("://");
        String out = uri;
        if (start >= 0) {
            int at = uri.lastIndexOf('@');
            if (at > start) {
                out = uri.substring(0, start + 3) + MASK + uri.substring(at);
            }
        }
        return PASSWORD_PARAM.matcher(out).replaceFirst("$1" + Matcher.quoteReplacement(MASK));
    }

    /**
     * What a message may say of a connection: scheme and authority without user-info, and the
     * path, with no query or fragment; {@code jdbc:} is kept. {@code "(no URL)"} for null.
     */
    public static String describe(String uri) {
        if (uri == null || uri.isBlank()) {
            return "(no URL)";
        }
        int start = uri.indexOf("://");
        if (start < 0) {
            return "(a URL without //)";
        }
        int at = uri.lastIndexOf('@');
        String rest = uri.substring(at > start ? at + 1 : start + 3);
        int end = rest.length();
        for (char c : new char[] {'?', '#', ';'}) {
            int i = rest.indexOf(c);
            if (i >= 0 && i < end) {
                end = i;
            }
        }
        return uri.substring(0, start + 3) + rest.substring(0, end);
    }

    /**
     * The secrets a URL carries, as they may appear in any text: its user-info, the password in
     * it, and every password-like query value, each raw and percent-decoded. Empty when there is none.
     */
    public static Set<String> secretsOf(String uri) {
        Set<String> secrets = new LinkedHashSet<>();
        if (uri == null) {
            return secrets;
        }
        int start = uri.indexOf("://");
        int at = uri.lastIndexOf('@');
        if (start >= 0 && at > start) {
            String userInfo = uri.substring(start + 3, at);
            add(secrets, userInfo);
            int colon = userInfo.indexOf(':');
            if (colon >= 0) {
                add(secrets, userInfo.substring(colon + 1));
            }
        }
        Matcher password = Pattern.compile("(?i)[?&;](?:password|pass|pwd|secret|token)=").matcher(uri);
        while (password.find()) {
            String value = uri.substring(password.end());
            add(secrets, value); // to the end: the password may hold '&'
            int amp = value.indexOf('&');
            if (amp >= 0) {
                add(secrets, value.substring(0, amp)); // what a driver that splits at '&' takes for the password
            }
        }
        return secrets;
    }

    /** {@code text} with every occurrence of each secret, longest first, replaced by {@code ***}. */
    public static String scrub(String text, Collection<String> secrets) {
        if (text == null || secrets.isEmpty()) {
            return text;
        }
        List<String> ordered = new ArrayList<>(secrets);
        ordered.sort(Comparator.comparingInt(String::length).reversed());
        String out = text;
        for (String secret : ordered) {
            out = out.replace(secret, MASK);
        }
        return out;
    }

    private static void add(Set<String> secrets, String candidate) {
        for (String form : List.of(candidate, decode(candidate), candidate.strip())) {
            if (form.length() >= MIN_SECRET && !form.toLowerCase(Locale.ROOT).equals("null")) {
                secrets.add(form);
            }
            for (String fragment : DELIMITERS.split(form)) {
                if (fragment.length() >= MIN_FRAGMENT && !fragment.equals(form)) {
                    secrets.add(fragment);
                }
            }
        }
    }

    private static String decode(String text) {
        try {
            return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return text; // a malformed escape: the raw form is what may be repeated
        }
    }
}
