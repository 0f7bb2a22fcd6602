package dev.fenced.lab;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one run of the worked example left behind, measured at the gateway (its ledger), in the
 * database (the rows) and in the two workers' event lines. Serialized as the {@code demo --json}
 * document and as each result of {@code compare --json}; the property order is part of that format.
 *
 * @param refunds refunds the gateway created for the merchant, duplicates included
 * @param stalledRefund what the gateway paid for the refund worker A was frozen on (r_815 in the article)
 * @param staleWritesAccepted worker A's claims and confirms the database accepted after B took the lease
 * @param lostOrStuck refunds not sent in the database or never created at the gateway, whichever is more
 * @param settledArticleSeconds when the last refund was settled, in article seconds; null when some never were
 * @param rowsByState the merchant's rows counted by state
 * @param pausedAtMs when worker A was frozen, in milliseconds since the run began
 * @param resumedAtMs when worker A was resumed, likewise
 * @param news what the provider's webhooks and the poll after them said, with {@code --provider stripe}; absent otherwise
 */
@JsonPropertyOrder({"mechanism", "label", "fencing", "speed", "refunds", "uniqueReferences", "totalAmount", "duplicates", "r815",
        "staleWritesAccepted", "lostOrStuck", "settledArticleSeconds", "workerA", "workerB", "rowsByState", "pausedAtMs", "resumedAtMs",
        "staleWrites", "duplicateRefunds", "timeline", "news"})
record DemoReport(String mechanism, String label, boolean fencing, double speed, int refunds, long uniqueReferences, String totalAmount,
                  long duplicates, @JsonProperty("r815") StalledRefund stalledRefund, long staleWritesAccepted, long lostOrStuck,
                  Double settledArticleSeconds, WorkerSummary workerA, WorkerSummary workerB, Map<String, Long> rowsByState,
                  long pausedAtMs, long resumedAtMs, List<StaleWrite> staleWrites, List<DuplicateRefund> duplicateRefunds,
                  List<TimelineEntry> timeline, @JsonInclude(JsonInclude.Include.NON_NULL) ProviderNews news) {

    DemoReport {
        rowsByState = Collections.unmodifiableMap(new TreeMap<>(rowsByState)); // sorted by state, as printed
        staleWrites = List.copyOf(staleWrites);
        duplicateRefunds = List.copyOf(duplicateRefunds);
        timeline = List.copyOf(timeline);
    }

    /** This report with the provider's news, the merchant's rows as they ended and the timeline with the news's notes. */
    DemoReport withNews(ProviderNews providerNews, Map<String, Long> finalRows, List<TimelineEntry> notes) {
        List<TimelineEntry> entries = new ArrayList<>(timeline);
        notes.stream().filter(note -> !entries.contains(note)).forEach(entries::add);
        entries.sort(Comparator.comparingLong(TimelineEntry::elapsedMs));
        return new DemoReport(mechanism, label, fencing, speed, refunds, uniqueReferences, totalAmount, duplicates, stalledRefund,
                staleWritesAccepted, lostOrStuck, settledArticleSeconds, workerA, workerB, finalRows, pausedAtMs, resumedAtMs, staleWrites,
                duplicateRefunds, entries, providerNews);
    }

    /**
     * The provider's word on the refunds, as the demo's webhook receiver and the poll after it wrote it.
     *
     * @param provider how the workers paid: {@code stripe}, through Stripe's official library
     * @param deliveries the webhook deliveries the receiver answered, by outcome
     * @param settled rows the provider settled
     * @param returned rows whose refund the provider failed after it accepted it, with its reason
     * @param byPoll rows whose news came by the poll after the webhooks, none came for them
     */
    @JsonPropertyOrder({"provider", "deliveries", "settled", "returned", "byPoll"})
    record ProviderNews(String provider, Map<String, Integer> deliveries, long settled, Map<String, String> returned, int byPoll) {
        ProviderNews {
            deliveries = Collections.unmodifiableMap(new TreeMap<>(deliveries));
            returned = Collections.unmodifiableMap(new TreeMap<>(returned));
        }
    }

    /** How many refunds the gateway created for the stalled refund, and for how much in all. */
    @JsonPropertyOrder({"amount", "refunds"})
    record StalledRefund(String amount, int refunds) {
    }

    /** A write of worker A's that the database accepted although B held the lease. */
    @JsonPropertyOrder({"elapsedMs", "event", "refund"})
    record StaleWrite(long elapsedMs, String event, String refund) {
    }

    /** A refund the gateway created although one already existed for the same reference. */
    @JsonPropertyOrder({"elapsedMs", "refund", "gatewayId"})
    record DuplicateRefund(long elapsedMs, String refund, String gatewayId) {
    }
}
