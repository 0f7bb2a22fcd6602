package dev.fenced.provider;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Checks the signature a provider puts on a webhook delivery, in Stripe's scheme: a header
 * {@code Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">} (one {@code v1} per
 * secret the provider signs with), accepted when one {@code v1} matches one of the configured
 * secrets and {@code t} is within the tolerance of this side's clock. Several secrets verify at once
 * during a rotation: add the new one, then remove the old one once the provider signs with the new.
 *
 * <p>What it guarantees: a body accepted was signed by a holder of a configured secret, at a time
 * within the tolerance; the comparison takes the same time whatever the bytes. What it does not: it
 * does not stop a replay inside the tolerance window (the receiver remembers event ids for that),
 * and it says nothing about the order of events. Secrets are never printed, and rejections never
 * echo the header. Immutable and thread-safe.
 */
public final class WebhookSignature {
    /** The header Stripe signs its deliveries in, and the simulated gateway too. */
    public static final String HEADER = "Stripe-Signature";
    /** Stripe's libraries' default: a delivery older or newer than this is refused. */
    public static final Duration DEFAULT_TOLERANCE = Duration.ofMinutes(5);
    /** Longer than any header a provider sends with a handful of secrets: nothing longer is parsed. */
    private static final int MAX_HEADER = 4096;

    private final List<SecretKeySpec> secrets;
    private final Duration tolerance;
    private final Clock clock;

    private WebhookSignature(List<String> secrets, Duration tolerance, Clock clock) {
        Objects.requireNonNull(secrets, "secrets");
        if (secrets.isEmpty()) {
            throw new IllegalArgumentException("at least one webhook secret is needed");
        }
        List<SecretKeySpec> keys = new ArrayList<>();
        for (String secret : secrets) {
            keys.add(key(secret));
        }
        this.secrets = List.copyOf(keys);
        Objects.requireNonNull(tolerance, "tolerance");
        if (tolerance.compareTo(Duration.ofSeconds(1)) < 0) {
            // Timestamps are whole seconds: a shorter tolerance would refuse deliveries signed a moment ago.
            throw new IllegalArgumentException("tolerance must be at least 1 s, got " + tolerance);
        }
        this.tolerance = tolerance;
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * @param secrets every secret a valid delivery may be signed with (two during a rotation)
     * @throws IllegalArgumentException for no secret, a secret that is blank, longer than 255
     *     characters or holds whitespace, or a tolerance under one second (the message never
     *     shows a secret)
     */
    public static WebhookSignature of(List<String> secrets, Duration tolerance, Clock clock) {
        return new WebhookSignature(secrets, tolerance, clock);
    }

    /** {@link #of} with the default tolerance and the system clock. */
    public static WebhookSignature of(List<String> secrets) {
        return of(secrets, DEFAULT_TOLERANCE, Clock.systemUTC());
    }

    public Duration tolerance() {
        return tolerance;
    }

    /**
     * Accepts {@code body} signed in {@code header}, or says why not.
     *
     * @throws WebhookRejectedException for a missing or malformed header, a timestamp outside the
     *     tolerance, or no signature made with a configured secret
     */
    public void verify(String header, byte[] body) {
        Objects.requireNonNull(body, "body");
        if (header == null || header.isBlank()) {
            throw new WebhookRejectedException("no " + HEADER + " header");
        }
        if (header.length() > MAX_HEADER) {
            throw new WebhookRejectedException(HEADER + " header is longer than " + MAX_HEADER + " characters");
        }
        Long timestamp = null;
        List<byte[]> signatures = new ArrayList<>();
        for (String part : header.split(",")) {
            int eq = part.indexOf('=');
            if (eq < 0) {
                continue;
            }
            String name = part.substring(0, eq).strip();
            String value = part.substring(eq + 1).strip();
            if (name.equals("t")) {
                timestamp = seconds(value);
            } else if (name.equals("v1")) {
                byte[] signature = hex(value);
                if (signature != null) {
                    signatures.add(signature);
                }
            }
        }
        if (timestamp == null) {
            throw new WebhookRejectedException(HEADER + " header has no timestamp t=");
        }
        if (signatures.isEmpty()) {
            throw new WebhookRejectedException(HEADER + " header has no v1= signature");
        }
        long age = clock.millis() / 1000 - timestamp;
        if (Math.abs(age) > tolerance.toSeconds()) {
            throw new WebhookRejectedException("the delivery's timestamp is " + Math.abs(age) + " s " + (age > 0 ? "old" : "ahead")
                    + ", outside the tolerance of " + tolerance.toSeconds() + " s");
        }
        byte[] signed = signedPayload(timestamp, body);
        for (SecretKeySpec secret : secrets) {
            byte[] expected = hmac(secret, signed);
            for (byte[] signature : signatures) {
                if (MessageDigest.isEqual(expected, signature)) {
                    return;
                }
            }
        }
        throw new WebhookRejectedException("no v1 signature matches a configured webhook secret");
    }

    /**
     * The header value a provider sends for {@code body} at {@code timestampSeconds}, signed with
     * each of {@code secrets}: what the simulated gateway sends, and what a test signs with.
     */
    public static String header(long timestampSeconds, byte[] body, List<String> secrets) {
        StringBuilder header = new StringBuilder("t=").append(timestampSeconds);
        byte[] signed = signedPayload(timestampSeconds, body);
        for (String secret : secrets) {
            header.append(",v1=").append(HexFormat.of().formatHex(hmac(key(secret), signed)));
        }
        return header.toString();
    }

    private static byte[] signedPayload(long timestamp, byte[] body) {
        byte[] prefix = (timestamp + ".").getBytes(StandardCharsets.US_ASCII);
        byte[] signed = new byte[prefix.length + body.length];
        System.arraycopy(prefix, 0, signed, 0, prefix.length);
        System.arraycopy(body, 0, signed, prefix.length, body.length);
        return signed;
    }

    private static SecretKeySpec key(String secret) {
        if (secret == null || secret.isBlank() || secret.length() > 255 || secret.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("a webhook secret must be 1 to 255 characters without whitespace");
        }
        return new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
    }

    private static byte[] hmac(SecretKeySpec key, byte[] payload) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            return mac.doFinal(payload);
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 is not available: " + e.getMessage(), e);
        }
    }

    private static Long seconds(String value) {
        if (value.isEmpty() || value.length() > 12 || !value.chars().allMatch(Character::isDigit)) {
            throw new WebhookRejectedException(HEADER + " header has a malformed timestamp");
        }
        return Long.parseLong(value);
    }

    /** The signature's bytes; null for a value that is not 64 hex digits (another scheme's, or garbage): ignored, as Stripe's libraries do. */
    private static byte[] hex(String value) {
        if (value.length() != 64) {
            return null;
        }
        try {
            return HexFormat.of().parseHex(value);
        } catch (IllegalArgumentException notHex) {
            return null;
        }
    }
}
