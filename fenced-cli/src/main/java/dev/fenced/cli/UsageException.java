package dev.fenced.cli;

/** A mistake in how the command was called, reported with exit code 2. */
public final class UsageException extends RuntimeException {
    public UsageException(String message) {
        super(message);
    }
}
