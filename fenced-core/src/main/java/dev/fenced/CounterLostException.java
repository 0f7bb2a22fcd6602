package dev.fenced;

/**
 * The fence counter for a resource vanished (or went backwards) after tokens had been issued
 * for it, and no {@link FenceFloor} was configured to reseed it. Issuing a token now could hand
 * out a number lower than fences already stored, so none was issued and no lease was taken.
 */
public class CounterLostException extends FencedException {
    private final String resource;
    private final long highestKnownToken;

    public CounterLostException(String resource, long highestKnownToken) {
        super("fence counter for '" + resource + "' is missing or below token " + highestKnownToken
                + " already issued; configure a FenceFloor (e.g. SELECT MAX(fence)) to reseed it");
        this.resource = resource;
        this.highestKnownToken = highestKnownToken;
    }

    public String resource() {
        return resource;
    }

    public long highestKnownToken() {
        return highestKnownToken;
    }
}
