package dev.fenced.redis;

import dev.fenced.FencedException;

/**
 * The Lettuce on the class path is outside the range fenced-redis is built and tested for
 * ({@value LettuceVersion#SUPPORTED}). Thrown before any connection is made; the message names the
 * version found and the range.
 */
public class UnsupportedLettuceVersionException extends FencedException {
    private final String found;

    public UnsupportedLettuceVersionException(String found) {
        super("fenced-redis runs on Lettuce " + LettuceVersion.SUPPORTED + "; the class path has Lettuce " + found);
        this.found = found;
    }

    /** The version found on the class path, as its jar states it. */
    public String found() {
        return found;
    }
}
