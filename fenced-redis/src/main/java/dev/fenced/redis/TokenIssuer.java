package dev.fenced.redis;

import dev.fenced.EpochSource;
import dev.fenced.FenceFloor;
import dev.fenced.TokenSource;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Who issues a resource's fencing tokens in a {@link RedisLeaseStore}, recorded beside its counter
 * ({@link RedisKeys#issuerKey}) by the first grant and checked by every later one: tokens of
 * different issuers do not order, so a store of another issuer is refused with
 * {@link dev.fenced.TokenIssuerMismatchException}. Switching a resource is
 * {@link RedisLeaseStore#switchTokenIssuer}. Also the one place a deployment's setting (the
 * command line's {@code --tokens}, the starter's {@code fenced.tokens}) becomes a {@link TokenPolicy}:
 * {@link #ofSetting}, then {@link #policy}.
 *
 * <p>Guarantees: two stores that issue tokens differently never both hold a resource while the key
 * is there. Does not guarantee: telling two durable sources apart (they are both {@link #SOURCE}),
 * nor the check once Redis lost the key (the next grant records its own issuer again); a lost
 * counter is still reseeded above the stored fences, and epochs start above every earlier one.
 */
public enum TokenIssuer {
    /** Redis's own counter, beside the lease ({@link TokenPolicy#redisCounter}); setting {@code redis}. */
    REDIS("redis"),
    /** Redis's counter in epochs from a durable source ({@link TokenPolicy#epochs}); setting {@code epochs}. */
    EPOCHS("epochs"),
    /** A durable {@code TokenSource}; Redis keeps only the lease ({@link TokenPolicy#durable}); setting {@code database}. */
    SOURCE("database");

    private final String setting;

    TokenIssuer(String setting) {
        this.setting = setting;
    }

    /** The name as Redis keeps it: {@code redis}, {@code epochs}, {@code source}. */
    public String recorded() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The name a deployment chooses this issuer by: {@code redis}, {@code epochs}, {@code database}. */
    public String setting() {
        return setting;
    }

    /** The issuer Redis recorded, or null for none or a name this version does not know. */
    public static TokenIssuer ofRecorded(String recorded) {
        for (TokenIssuer issuer : values()) {
            if (issuer.recorded().equals(recorded)) {
                return issuer;
            }
        }
        return null;
    }

    /**
     * The setting of the issuer Redis recorded, for messages in a deployment's words; the recorded
     * name itself if it is none this version knows.
     */
    public static String settingOf(String recorded) {
        TokenIssuer issuer = ofRecorded(recorded);
        return issuer == null ? recorded : issuer.setting;
    }

    /**
     * The issuer a deployment's setting names, case and surrounding blanks ignored.
     *
     * @throws IllegalArgumentException for anything but {@code redis}, {@code epochs} or {@code database}
     */
    public static TokenIssuer ofSetting(String setting) {
        for (TokenIssuer issuer : values()) {
            if (setting != null && issuer.setting.equals(setting.trim().toLowerCase(Locale.ROOT))) {
                return issuer;
            }
        }
        throw new IllegalArgumentException("must be redis, epochs or database, got " + setting);
    }

    /**
     * This issuer's policy, from what the deployment has; only the supplier this issuer needs is
     * called: the floor for {@link #REDIS} (null for none), the epochs for {@link #EPOCHS}, the
     * token source for {@link #SOURCE}.
     */
    public TokenPolicy policy(Supplier<? extends FenceFloor> floor, Supplier<? extends EpochSource> epochs,
                              Supplier<? extends TokenSource> source) {
        return switch (this) {
            case REDIS -> {
                FenceFloor given = floor.get();
                yield given == null ? TokenPolicy.redisCounter() : TokenPolicy.redisCounter(given);
            }
            case EPOCHS -> TokenPolicy.epochs(epochs.get());
            case SOURCE -> TokenPolicy.durable(source.get());
        };
    }
}
