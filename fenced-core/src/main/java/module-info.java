/**
 * The API: leases, fencing tokens, the fence floor and token source SPIs, the executor, the
 * observer and the exception tree under {@code dev.fenced.FencedException}. No dependencies.
 * {@code dev.fenced.internal} is shared with fenced's own modules only: it is not API and may change
 * in any release.
 */
module dev.fenced.core {
    exports dev.fenced;
    exports dev.fenced.internal to dev.fenced.redis, dev.fenced.jdbc, dev.fenced.fleet, dev.fenced.settlement;
}
