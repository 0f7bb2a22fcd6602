package dev.fenced.redis;

import dev.fenced.LeaseArguments;

/**
 * The Redis keys a {@link RedisLeaseStore} keeps for a resource: {@code [prefix]lock:{resource}}
 * holds the lease, {@code [prefix]fence:{resource}} the token counter, and, with token epochs,
 * {@code [prefix]fence-epoch:{resource}} the counter's epoch, and {@code [prefix]fence-issuer:{resource}}
 * who issues the resource's tokens (the store's own counter, epochs, or a durable source). {@link #DEFAULT} has no
 * prefix, which is the layout every store has always used.
 *
 * <p>Guarantees: every key of a resource carries the same hash tag, {@code {resource}}, so they are
 * in one Redis Cluster slot; two layouts with different prefixes never share a key, so their
 * leases and counters are independent on one server. Does not guarantee: that nothing else on the
 * server writes these keys, nor a way to move a resource's data from one prefix to another.
 *
 * <p>Immutable and thread-safe.
 */
public final class RedisKeys {
    /** The longest prefix {@link #withPrefix(String)} accepts. */
    public static final int MAX_PREFIX_LENGTH = 64;

    /** No prefix: {@code lock:{resource}} and {@code fence:{resource}}, as deployed data has them. */
    public static final RedisKeys DEFAULT = new RedisKeys("");

    private final String prefix;
    private final String lockStart;
    private final String fenceStart;
    private final String epochStart;
    private final String issuerStart;
    private final String epochTicketStart;

    private RedisKeys(String prefix) {
        this.prefix = prefix;
        this.lockStart = prefix + "lock:{";
        this.fenceStart = prefix + "fence:{";
        this.epochStart = prefix + "fence-epoch:{";
        this.issuerStart = prefix + "fence-issuer:{";
        this.epochTicketStart = prefix + "fence-epoch-ticket:{";
    }

    /**
     * The layout with {@code prefix} before each key, e.g. {@code "app1:"} for
     * {@code app1:lock:{resource}}; the empty prefix is {@link #DEFAULT}.
     *
     * @throws IllegalArgumentException when the prefix is null, longer than {@value #MAX_PREFIX_LENGTH}
     *     characters, or holds a brace, whitespace or a control character
     */
    public static RedisKeys withPrefix(String prefix) {
        return requireValidPrefix(prefix).isEmpty() ? DEFAULT : new RedisKeys(prefix);
    }

    /** The prefix, empty for {@link #DEFAULT}. */
    public String prefix() {
        return prefix;
    }

    /**
     * The key that holds the resource's lease: the owner id, with the lease's TTL.
     *
     * @throws IllegalArgumentException for a resource name {@link LeaseArguments#requireValidResource} refuses
     */
    public String lockKey(String resource) {
        return lockStart + LeaseArguments.requireValidResource(resource) + "}";
    }

    /**
     * The key that holds the resource's token counter, never expiring.
     *
     * @throws IllegalArgumentException for a resource name {@link LeaseArguments#requireValidResource} refuses
     */
    public String fenceKey(String resource) {
        return fenceStart + LeaseArguments.requireValidResource(resource) + "}";
    }

    /**
     * The key that holds the epoch of the resource's tokens and the redis-server process it began
     * on, for stores with {@link TokenPolicy#epochs token epochs}; never expiring, in the same slot as the others.
     *
     * @throws IllegalArgumentException for a resource name {@link LeaseArguments#requireValidResource} refuses
     */
    public String epochKey(String resource) {
        return epochStart + LeaseArguments.requireValidResource(resource) + "}";
    }

    /**
     * The key that names who issues the resource's tokens ({@code redis}, {@code epochs} or
     * {@code source}), written by the first acquisition and checked by every later one: tokens of
     * different issuers do not order, so a store of another kind is refused. Never expiring, in the
     * same slot as the others.
     *
     * @throws IllegalArgumentException for a resource name {@link LeaseArguments#requireValidResource} refuses
     */
    public String issuerKey(String resource) {
        return issuerStart + LeaseArguments.requireValidResource(resource) + "}";
    }

    /**
     * The key that holds the ticket a new epoch must be installed with, for stores with
     * {@link TokenPolicy#epochs token epochs}: made by the refusal that asks for a new epoch, consumed by the install,
     * expiring after a minute; lost with the rest, so that an epoch drawn before a loss is never
     * installed after it.
     *
     * @throws IllegalArgumentException for a resource name {@link LeaseArguments#requireValidResource} refuses
     */
    public String epochTicketKey(String resource) {
        return epochTicketStart + LeaseArguments.requireValidResource(resource) + "}";
    }

    // Redis Cluster hashes only the part between the first '{' and the next '}', and a script may
    // touch only keys of one slot (CROSSSLOT otherwise); the acquire script writes both keys. A
    // brace in the prefix would move the tag: "a{b:lock:{r}" and "a{b:fence:{r}" hash different
    // text and land in different slots, and "{app}:" would put every resource in one slot.
    private static String requireValidPrefix(String prefix) {
        if (prefix == null) {
            throw new IllegalArgumentException("key prefix must not be null; use RedisKeys.DEFAULT for none");
        }
        if (prefix.length() > MAX_PREFIX_LENGTH) {
            throw new IllegalArgumentException("key prefix '" + printable(prefix) + "' is " + prefix.length()
                    + " characters long; the limit is " + MAX_PREFIX_LENGTH);
        }
        for (int i = 0; i < prefix.length(); i++) {
            char c = prefix.charAt(i);
            if (c == '{' || c == '}' || Character.isWhitespace(c) || Character.isSpaceChar(c) || Character.isISOControl(c)) {
                throw new IllegalArgumentException("key prefix '" + printable(prefix) + "' contains '"
                        + printable(String.valueOf(c)) + "' at index " + i
                        + "; use characters other than braces, whitespace and control characters");
            }
        }
        return prefix;
    }

    /** Control and space characters escaped, so that a message shows what was passed. */
    private static String printable(String s) {
        StringBuilder out = new StringBuilder();
        for (char c : s.toCharArray()) {
            boolean invisible = Character.isISOControl(c) || (Character.isSpaceChar(c) && c != ' ');
            out.append(invisible ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return out.toString();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof RedisKeys keys && keys.prefix.equals(prefix);
    }

    @Override
    public int hashCode() {
        return prefix.hashCode();
    }

    @Override
    public String toString() {
        return "RedisKeys[" + lockStart + "resource}, " + fenceStart + "resource}]";
    }
}
