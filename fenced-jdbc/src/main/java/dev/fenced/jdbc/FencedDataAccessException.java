package dev.fenced.jdbc;

import dev.fenced.FencedException;

/** A fenced statement failed for a reason other than the fence, a conflict or an unreachable database. */
public class FencedDataAccessException extends FencedException {
    public FencedDataAccessException(String message, Throwable cause) {
        super(message, cause);
    }
}
