package dev.fenced.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import dev.fenced.fleet.JobQueueStatus;
import java.util.Map;

/**
 * What {@code fenced status} shows for a merchant: the lease, the counter, the refund rows, and
 * when asked the gateway's view and the job stream's. The optional parts are null when not asked,
 * and left out of the JSON; the text says "none" for a missing holder or counter, never "null".
 *
 * @param leaseMillisLeft the lease's time left, 0 when it is free, null when Redis could not be read
 * @param counter the token counter, or null when Redis has none for the merchant (or could not be read)
 *
 * @param gatewayRefunds refunds the gateway holds for the merchant, or null without a gateway
 * @param jobs the whole job stream (every merchant's jobs), or null without NATS
 * @param jobsUnknown why the job stream could not be shown when NATS was given (no such stream,
 *     NATS unreachable), or null
 * @param tokens who issues the merchant's tokens, as recorded in Redis and spelled by {@code --tokens}, or null when
 *     nothing is recorded yet
 * @param tokensProblem what is wrong with the tokens as this deployment sees them (another issuer than {@code --tokens},
 *     a counter below the stored fences), or null
 * @param leaseUnknown why the lease, the counter and the tokens could not be read (Redis unreachable), or null
 * @param gatewayUnknown why the gateway's view could not be read when a gateway was given, or null
 */
@JsonPropertyOrder({"merchant", "leaseHolder", "leaseMillisLeft", "counter", "leaseUnknown", "rowsByState", "highestFence", "totalAmount",
        "gatewayRefunds", "gatewayDuplicates", "gatewayUnknown", "jobs", "jobsUnknown", "tokens", "tokensProblem"})
public record StatusReport(String merchant, String leaseHolder, Long leaseMillisLeft, Long counter, Map<String, Long> rowsByState,
                           long highestFence, String totalAmount,
                           @JsonInclude(JsonInclude.Include.NON_NULL) Integer gatewayRefunds,
                           @JsonInclude(JsonInclude.Include.NON_NULL) Long gatewayDuplicates,
                           @JsonInclude(JsonInclude.Include.NON_NULL) JobQueueStatus jobs,
                           @JsonInclude(JsonInclude.Include.NON_NULL) String jobsUnknown,
                           String tokens,
                           @JsonInclude(JsonInclude.Include.NON_NULL) String tokensProblem,
                           @JsonInclude(JsonInclude.Include.NON_NULL) String leaseUnknown,
                           @JsonInclude(JsonInclude.Include.NON_NULL) String gatewayUnknown) {

    /** The report as the text lines of {@code status}, in the JSON's order. */
    String text() {
        StringBuilder out = new StringBuilder();
        line(out, "merchant", merchant);
        if (leaseUnknown != null) {
            line(out, "lease", "unknown: " + leaseUnknown);
        } else {
            line(out, "leaseHolder", leaseHolder == null ? "none" : leaseHolder);
            line(out, "leaseMillisLeft", leaseMillisLeft);
            line(out, "counter", counter == null ? "none" : counter);
        }
        line(out, "rowsByState", rowsByState);
        long failed = rowsByState.getOrDefault("failed", 0L);
        if (failed > 0) {
            line(out, "failed", failed + " refunds not paid: they need an operator (fenced reconcile --merchant " + merchant + ")");
        }
        line(out, "highestFence", highestFence);
        line(out, "totalAmount", totalAmount);
        if (gatewayRefunds != null) {
            line(out, "gatewayRefunds", gatewayRefunds);
            line(out, "gatewayDuplicates", gatewayDuplicates);
        }
        if (gatewayUnknown != null) {
            line(out, "gateway", "unknown: " + gatewayUnknown);
        }
        if (jobs != null) {
            line(out, "jobs (stream)", "waiting " + jobs.waiting() + ", handed back " + jobs.handedBack() + ", in progress " + jobs.inProgress()
                    + ", redelivered " + jobs.redelivered() + ", dead letters " + jobs.deadLetters());
        }
        if (jobsUnknown != null) {
            line(out, "jobs (stream)", jobsUnknown);
        }
        if (leaseUnknown == null) {
            line(out, "tokens", tokens == null ? "no issuer recorded yet" : tokens);
        }
        if (tokensProblem != null) {
            line(out, "tokensProblem", tokensProblem);
        }
        return out.toString();
    }

    private static void line(StringBuilder out, String key, Object value) {
        out.append(String.format("%-18s %s%n", key, value));
    }
}
