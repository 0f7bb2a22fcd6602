package dev.fenced.internal;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps secrets out of messages and logs, by construction: a message names a connection by
 * {@link #describe(String)} (scheme, hosts, port, database; never user-info or a query), and any
 * other text that may repeat a URL (a driver's error) goes through {@link #scrub} with the secrets
 * {@link #secretsOf(String)} found in the configured URLs.
 *
 * <p>A password of ordinary characters (letters, digits, {@code ._~-}) is read by every driver as it
 * stands and never repeated in pieces, so it is masked only where it stands as a password: the
 * user "postgres" and the host "postgresql" stay readable when the password is "postgres". Other
 * passwords may hold any character ({@code / @ & ; : % space}, quotes, unicode), raw or
 * percent-encoded, and a driver that misreads such a URL repeats a piece of it: these are masked
 * everywhere, with nothing relying on their being well-formed (user-info runs to the last {@code @},
 * a password parameter to the end of the URL, and the pieces between URL delimiters are secrets too).
 */
public final class Redaction {
    private static final Pattern PASSWORD_PARAM = Pattern.compile("(?i)([?&;](?:password|pass|pwd|secret|token)=).*$");
    private static final String MASK = "***";
    /** Shorter candidates would mask ordinary words in a message; such a password is masked where it stands in a URL only. */
    private static final int MIN_SECRET = 3;
    /** A driver that misparses a URL repeats the piece of a password up to a delimiter ("Incorrect port value : s3cret"). */
    private static final Pattern DELIMITERS = Pattern.compile("[/@:?#&;=\\s]+");
    private static final int MIN_FRAGMENT = 4;
    private static final Pattern PASSWORD_NAME = Pattern.compile("(?i)[?&;](?:password|pass|pwd|secret|token)=");
    /** What a driver reads as it stands: a password of these characters alone is where the URL puts it, and nowhere else. */
    private static final String ORDINARY = "[A-Za-z0-9._~-]";
    private static final Pattern ORDINARY_USER_INFO = Pattern.compile(ORDINARY + "*(?::" + ORDINARY + "*)?");
    /** The parameters after an ordinary password: had the password held an {@code &}, one of these would not read as name=value. */
    private static final Pattern ORDINARY_PARAMS = Pattern.compile("(?:&" + ORDINARY + "+=[^&=]*)*");

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
     * The secrets a URL carries: its password, from user-info or a password-like query parameter.
     * An ordinary password is one {@link Secret#asPassword}; any other is {@link Secret#anywhere},
     * with the whole user-info or parameter value and its pieces, each raw and percent-decoded.
     * Empty when there is none.
     */
    public static Set<Secret> secretsOf(String uri) {
        Set<Secret> secrets = new LinkedHashSet<>();
        if (uri == null) {
            return secrets;
        }
        int start = uri.indexOf("://");
        int at = uri.lastIndexOf('@');
        if (start >= 0 && at > start) {
            String userInfo = uri.substring(start + 3, at);
            int colon = userInfo.indexOf(':');
            if (ORDINARY_USER_INFO.matcher(userInfo).matches()) {
                addAsPassword(secrets, userInfo.substring(colon + 1)); // no colon: the user-info is the password (redis://pw@host)
            } else {
                addAnywhere(secrets, userInfo);
                if (colon >= 0) {
                    addAnywhere(secrets, userInfo.substring(colon + 1));
                }
            }
        }
        Matcher password = PASSWORD_NAME.matcher(uri);
        while (password.find()) {
            String value = uri.substring(password.end()); // to the end: the password may hold '&'
            int amp = value.indexOf('&');
            String first = amp >= 0 ? value.substring(0, amp) : value; // what a driver that splits at '&' takes for the password
            if (first.matches(ORDINARY + "+") && ORDINARY_PARAMS.matcher(value.substring(first.length())).matches()) {
                addAsPassword(secrets, first);
            } else {
                addAnywhere(secrets, value);
                if (amp >= 0) {
                    addAnywhere(secrets, first);
                }
            }
        }
        return secrets;
    }

    /**
     * {@code text} with each secret masked by {@code ***}: those masked anywhere first, longest first,
     * then the ordinary passwords where they stand as passwords, which covers every whole copy of
     * the URL they came from.
     */
    public static String scrub(String text, Collection<Secret> secrets) {
        if (text == null || secrets.isEmpty()) {
            return text;
        }
        List<Secret> ordered = new ArrayList<>(secrets);
        ordered.sort(Comparator.comparing((Secret secret) -> !secret.anywhere()).thenComparing(secret -> -secret.text.length()));
        String out = text;
        for (Secret secret : ordered) {
            out = secret.maskIn(out);
        }
        return out;
    }

    private static void addAsPassword(Set<Secret> secrets, String password) {
        if (!password.isEmpty()) {
            secrets.add(Secret.asPassword(password));
        }
    }

    private static void addAnywhere(Set<Secret> secrets, String candidate) {
        for (String form : List.of(candidate, decode(candidate), candidate.strip())) {
            if (form.length() >= MIN_SECRET && !form.toLowerCase(Locale.ROOT).equals("null")) {
                secrets.add(Secret.anywhere(form));
            }
            for (String fragment : DELIMITERS.split(form)) {
                if (fragment.length() >= MIN_FRAGMENT && !fragment.equals(form)) {
                    secrets.add(Secret.anywhere(fragment));
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

    /**
     * A secret and where a text may hold it: anywhere, or only where it stands as a password (after
     * {@code password=}, {@code pass=}, {@code pwd=}, {@code secret=} or {@code token=} in any case,
     * or in user-info: {@code ://user:secret@}, {@code ://secret@}), raw or percent-encoded.
     * Its {@code toString} never shows it.
     */
    public static final class Secret {
        private final String text;
        /** Where the secret stands as a password, what comes before it as group 1 or 2; null when it is masked anywhere. */
        private final Pattern asPassword;

        private Secret(String text, Pattern asPassword) {
            this.text = text;
            this.asPassword = asPassword;
        }

        /** A secret masked wherever it appears. */
        public static Secret anywhere(String text) {
            return new Secret(Objects.requireNonNull(text, "text"), null);
        }

        /** A password masked only where it stands as a password; a word equal to it elsewhere stays. */
        public static Secret asPassword(String password) {
            String forms = Pattern.quote(password);
            String encoded = URLEncoder.encode(password, StandardCharsets.UTF_8);
            if (!encoded.equals(password)) {
                forms = "(?:" + forms + "|" + Pattern.quote(encoded) + ")";
            }
            String parameter = "((?<![A-Za-z0-9_])(?i:password|pass|pwd|secret|token)=)" + forms + "(?!" + ORDINARY + ")";
            String userInfo = "(://(?:" + ORDINARY + "*:)?)" + forms + "(?=@)";
            return new Secret(password, Pattern.compile(parameter + "|" + userInfo));
        }

        /** Whether this secret is masked wherever it appears. */
        public boolean anywhere() {
            return asPassword == null;
        }

        String maskIn(String text) {
            return asPassword == null ? text.replace(this.text, MASK) : asPassword.matcher(text).replaceAll("$1$2" + Matcher.quoteReplacement(MASK));
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Secret secret && secret.text.equals(text) && secret.anywhere() == anywhere();
        }

        @Override
        public int hashCode() {
            return Objects.hash(text, anywhere());
        }

        @Override
        public String toString() {
            return anywhere() ? "Secret[anywhere]" : "Secret[as a password]";
        }
    }
}
