package dev.fenced.settlement;

/** The one check every entry point applies to a merchant id. */
public final class Merchants {
    private Merchants() {
    }

    /** Returns {@code merchant} when it is 1 to 64 letters, digits, underscores or hyphens. */
    public static String requireValid(String merchant) {
        if (merchant == null || merchant.isBlank()) {
            throw new IllegalArgumentException("merchant id must not be blank");
        }
        if (!isValid(merchant)) {
            throw new IllegalArgumentException("merchant id '" + merchant + "' must be 1 to 64 letters, digits, underscores or hyphens");
        }
        return merchant;
    }

    /** True when {@code merchant} is a valid merchant id (see {@link #requireValid}). */
    public static boolean isValid(String merchant) {
        return merchant != null && merchant.matches("[A-Za-z0-9_-]{1,64}");
    }

    private static final String RESOURCE_PREFIX = "settle:";

    /** The lease resource that guards a merchant's settlement: {@code settle:<merchant>}. */
    public static String resource(String merchant) {
        return RESOURCE_PREFIX + requireValid(merchant);
    }

    /**
     * The merchant a settlement resource guards: the inverse of {@link #resource(String)}, e.g. for a
     * fence floor scoped by merchant.
     *
     * @throws IllegalArgumentException for a resource that is not {@code settle:<valid merchant>}
     */
    public static String merchantOf(String resource) {
        if (resource == null || !resource.startsWith(RESOURCE_PREFIX)) {
            throw new IllegalArgumentException("'" + resource + "' is not a settlement resource (settle:<merchant>)");
        }
        return requireValid(resource.substring(RESOURCE_PREFIX.length()));
    }
}
