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
        if (!merchant.matches("[A-Za-z0-9_-]{1,64}")) {
            throw new IllegalArgumentException("merchant id '" + merchant + "' must be 1 to 64 letters, digits, underscores or hyphens");
        }
        return merchant;
    }

    /** The lease resource that guards a merchant's settlement: {@code settle:<merchant>}. */
    public static String resource(String merchant) {
        return "settle:" + requireValid(merchant);
    }
}
