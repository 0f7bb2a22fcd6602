package dev.fenced.cli;

/** A mistake in how the command was called, reported with exit code 2. */
final class UsageException extends RuntimeException {
    UsageException(String message) {
        super(message);
    }
}
