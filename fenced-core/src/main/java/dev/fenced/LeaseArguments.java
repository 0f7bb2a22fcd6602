package dev.fenced;

import dev.fenced.internal.Durations;
import java.time.Duration;

/** The checks every {@link LeaseStore} applies to its arguments, in one place. */
public final class LeaseArguments {
    public static final int MAX_RESOURCE_LENGTH = 200;
    public static final Duration MAX_TTL = Duration.ofDays(1);

    private LeaseArguments() {
    }

    /**
     * Returns the resource name when it is 1 to 200 printable ASCII characters without whitespace
     * or braces (braces would break the Redis Cluster hash tag the keys are built with).
     */
    public static String requireValidResource(String resource) {
        if (resource == null) {
            throw new IllegalArgumentException("resource name must not be null");
        }
        if (resource.isBlank()) {
            throw new IllegalArgumentException("resource name must not be blank");
        }
        if (resource.length() > MAX_RESOURCE_LENGTH) {
            throw new IllegalArgumentException("resource name is " + resource.length()
                    + " characters long; the limit is " + MAX_RESOURCE_LENGTH);
        }
        for (int i = 0; i < resource.length(); i++) {
            char c = resource.charAt(i);
            if (c <= ' ' || c > '~' || c == '{' || c == '}') {
                throw new IllegalArgumentException("resource name '" + printable(resource)
                        + "' contains '" + printable(String.valueOf(c)) + "' at index " + i
                        + "; use printable ASCII without whitespace or braces");
            }
        }
        return resource;
    }

    /** Returns the TTL when it is positive and at most one day. */
    public static Duration requireValidTtl(Duration ttl) {
        if (ttl == null) {
            throw new IllegalArgumentException("TTL must not be null");
        }
        if (ttl.isNegative() || ttl.isZero() || ttl.toMillis() < 1) {
            throw new IllegalArgumentException("TTL must be at least 1 ms, got " + Durations.human(ttl));
        }
        if (ttl.compareTo(MAX_TTL) > 0) {
            throw new IllegalArgumentException("TTL " + Durations.human(ttl) + " is over the limit of one day;"
                    + " a lease that long turns a crashed worker into a day-long outage");
        }
        return ttl;
    }

    /**
     * A new owner id for one acquisition: a random UUID, after {@code label/} when a label is given
     * (a worker's name, which status pages show). Only the id's holder can renew or release.
     */
    public static String newOwnerId(String label) {
        String random = java.util.UUID.randomUUID().toString();
        return label == null ? random : label + "/" + random;
    }

    private static String printable(String s) {
        StringBuilder out = new StringBuilder();
        for (char c : s.toCharArray()) {
            out.append(c < ' ' || c > '~' ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return out.toString();
    }
}
