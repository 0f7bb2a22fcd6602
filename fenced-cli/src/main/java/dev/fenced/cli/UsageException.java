package dev.fenced.cli;

/** A mistake in how the command was called, reported with exit code 2. */
public final class UsageException extends RuntimeException {
    public UsageException(String message) {
        super(message);
    }

    /** Returns {@code value} when given; otherwise the usage error of a missing option and its environment variable. */
    static String requireGiven(String value, String option, String env) {
        if (value == null || value.isBlank()) {
            throw new UsageException("needs " + option + " or the environment variable " + env);
        }
        return value;
    }

    /**
     * A library's refusal of a setting as the usage error of the option named after it: the library
     * words the rule ("jobs must be 1 to 64, got 0"), the command line names the option ("--jobs ...").
     */
    static UsageException ofOption(IllegalArgumentException refusal) {
        return new UsageException("--" + refusal.getMessage());
    }
}
