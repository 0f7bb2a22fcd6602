package dev.fenced.redis;

import dev.fenced.FencedException;

/**
 * A token Redis's counter would have to reach is above 2^53, the largest integer its Lua scripts
 * hold exactly (Lua numbers are doubles there): above it, two acquisitions can be handed the same
 * token. The counter never gets there by counting; a stored fence or a floor this high comes from
 * another token space (the database's sequence, epochs, a value written by hand). Nothing was
 * granted or raised. Issue tokens from the database instead ({@link TokenPolicy#durable}), or find
 * where the high fence came from.
 */
public final class TokenOutOfRangeException extends FencedException {
    /** 2^53: Redis's Lua scripts hold integers exactly below it; a floor, fence or token must stay below 2^53 - 1 so that one more is exact. */
    public static final long LIMIT = 1L << 53;

    private final String resource;
    private final long value;

    TokenOutOfRangeException(String resource, String what, long value) {
        super(what + " for '" + resource + "' is " + value + ", at or above 2^53 - 1 (" + (LIMIT - 1) + "): Redis's Lua scripts"
                + " hold integers exactly only up to 2^53, and tokens from its counter could repeat. Such a fence comes from another token space; issue"
                + " tokens from the database (TokenPolicy.durable) or find where it came from. Nothing was granted or raised.");
        this.resource = resource;
        this.value = value;
    }

    /** Refuses {@code value} (a floor, a stored fence, a token seen or issued) when the counter could not go on from it exactly. */
    static long requireCountable(String resource, String what, long value) {
        if (value >= LIMIT - 1) {
            throw new TokenOutOfRangeException(resource, what, value);
        }
        return value;
    }

    public String resource() {
        return resource;
    }

    public long value() {
        return value;
    }
}
