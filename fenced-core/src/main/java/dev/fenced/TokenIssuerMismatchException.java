package dev.fenced;

/**
 * A resource's tokens come from another issuer than this store's (a Redis counter, Redis counters
 * in epochs, a durable source): no lease was taken and no token issued. Tokens of different
 * issuers do not order, so a holder of one could win the fence against a live holder of the other;
 * a resource keeps the issuer its first holder used until it is switched over deliberately, while
 * no lease is live, with every new token placed above every stored fence.
 */
public class TokenIssuerMismatchException extends FencedException {
    private final String resource;
    private final String recordedIssuer;
    private final String thisIssuer;

    public TokenIssuerMismatchException(String resource, String recordedIssuer, String thisIssuer) {
        super("tokens of '" + resource + "' come from " + recordedIssuer + ", this store issues them from " + thisIssuer
                + "; tokens of different issuers do not order: use " + recordedIssuer + ", or switch the resource over deliberately");
        this.resource = resource;
        this.recordedIssuer = recordedIssuer;
        this.thisIssuer = thisIssuer;
    }

    public String resource() {
        return resource;
    }

    /** The issuer the resource's tokens come from, as recorded where every holder sees it. */
    public String recordedIssuer() {
        return recordedIssuer;
    }

    /** The issuer of the store that was refused. */
    public String thisIssuer() {
        return thisIssuer;
    }
}
