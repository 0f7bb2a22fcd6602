package dev.fenced.cli;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Where a deployment's leases and tokens live ({@code --leases}, env {@code FENCED_LEASES}): Redis
 * (its counter, epochs or the database sequence, as {@code --tokens} says), the database the refunds
 * are in (tokens from its sequence), or etcd (tokens from its revisions). One choice per
 * deployment: a lease in one store does not keep out a holder of another, so the choice is
 * recorded with the database's deployment and a process with another one is refused.
 */
public enum LeaseBackend {
    REDIS("Redis"), DATABASE("the database"), ETCD("etcd");

    private final String label;

    LeaseBackend(String label) {
        this.label = label;
    }

    /** The option's value: redis, database or etcd. */
    public String setting() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** How a sentence names the store: "Redis", "the database", "etcd". */
    public String label() {
        return label;
    }

    /** The backend an option value names, case-insensitively; an IllegalArgumentException listing the choices otherwise. */
    public static LeaseBackend ofSetting(String value) {
        for (LeaseBackend backend : values()) {
            if (backend.setting().equalsIgnoreCase(value == null ? "" : value.trim())) {
                return backend;
            }
        }
        throw new IllegalArgumentException("--leases must be " + Arrays.stream(values()).map(LeaseBackend::setting)
                .collect(Collectors.joining(", ", "", "")).replaceFirst(", (?=[^,]*$)", " or ") + ", got '" + value + "'");
    }

    /** Reads {@code --leases} when the command line is parsed, before anything connects. */
    public static final class Converter implements picocli.CommandLine.ITypeConverter<LeaseBackend> {
        @Override
        public LeaseBackend convert(String value) {
            try {
                return ofSetting(value);
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
