package dev.fenced.settlement;

/**
 * One thing a settlement worker did, for timelines and histories.
 *
 * @param type what happened: acquired, busy, checked, claimed, gateway, confirmed, failed (a
 *     definitive refusal), skipped (finished by an earlier holder), left (put back to pending, or
 *     left sending in doubt), gateway-down, violation, lease-lost, released, outcome
 * @param worker the worker's name
 * @param refundId the refund concerned, or null
 * @param token the worker's token (0 before it has one)
 * @param detail free text: a gateway id, a stored fence, an outcome
 * @param atMillis wall-clock epoch milliseconds
 */
public record SettlementEvent(String type, String worker, String refundId, long token, String detail, long atMillis) {
}
