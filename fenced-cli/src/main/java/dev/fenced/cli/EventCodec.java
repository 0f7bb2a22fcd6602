package dev.fenced.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fenced.fleet.JobEvent;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementOutcome;
import java.io.IOException;
import java.util.Optional;

/**
 * Writes and reads {@link EventLine}s, one JSON object per line, the {@code type} field telling
 * them apart: an event's type name, {@code result} or {@code ready}. Reading a line that is not
 * one of them gives an empty result, so a worker's other output never breaks its orchestrator.
 */
public final class EventCodec {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String RESULT = "result";
    private static final String READY = "ready";

    private EventCodec() {
    }

    public static String write(EventLine line) {
        ObjectNode node = JSON.createObjectNode();
        if (line instanceof EventLine.Event e) {
            node.put("type", e.type().wireName());
            node.put("worker", e.worker());
            node.put("merchant", e.merchant());
            node.put("refund", e.refund());
            node.put("token", e.token());
            node.put("detail", e.detail());
            node.put("pid", e.pid());
        } else if (line instanceof EventLine.Result r) {
            node.put("type", RESULT);
            node.put("worker", r.worker());
            node.put("merchant", r.merchant());
            node.put("result", r.result().name());
            node.put("token", r.token());
            node.put("sent", r.sent());
            node.put("recovered", r.recovered());
            node.put("failed", r.failed());
            node.put("skipped", r.skipped());
            node.put("left", r.left());
            node.put("refusedAt", r.refusedAt());
            node.put("storedFence", r.storedFence());
            node.put("storedState", r.storedState());
            node.put("error", r.error());
        } else if (line instanceof EventLine.Job j) {
            node.put("type", j.type().wireName());
            node.put("worker", j.worker());
            node.put("merchant", j.merchant());
            node.put("sequence", j.sequence());
            node.put("delivery", j.delivery());
            node.put("detail", j.detail());
            node.put("pid", j.pid());
        } else {
            node.put("type", READY);
            node.put("worker", line.worker());
        }
        node.put("at", line.at());
        return node.toString();
    }

    /** The line as an {@link EventLine}; empty when it is not JSON or not of a known type. */
    public static Optional<EventLine> read(String text) {
        if (text == null || !text.startsWith("{")) {
            return Optional.empty();
        }
        JsonNode node;
        try {
            node = JSON.readTree(text);
        } catch (IOException notJson) {
            return Optional.empty();
        }
        String type = node.path("type").asText();
        String worker = text(node, "worker");
        long at = node.path("at").asLong();
        try {
            return Optional.of(switch (type) {
                case RESULT -> new EventLine.Result(worker, text(node, "merchant"), SettlementOutcome.Result.valueOf(node.path("result").asText()),
                        node.path("token").asLong(), node.path("sent").asInt(), node.path("recovered").asInt(), node.path("failed").asInt(),
                        node.path("skipped").asInt(), node.path("left").asInt(), text(node, "refusedAt"),
                        node.hasNonNull("storedFence") ? node.get("storedFence").asLong() : null, text(node, "storedState"),
                        text(node, "error"), at);
                case READY -> new EventLine.Ready(worker, at);
                default -> type.startsWith("job-")
                        ? new EventLine.Job(JobEvent.Type.ofWireName(type), worker, text(node, "merchant"), node.path("sequence").asLong(),
                                node.path("delivery").asLong(), text(node, "detail"), at, node.path("pid").asLong())
                        : event(type, node, worker, at);
            });
        } catch (IllegalArgumentException unknownType) {
            return Optional.empty();
        }
    }

    private static EventLine event(String type, JsonNode node, String worker, long at) {
        return new EventLine.Event(SettlementEvent.Type.ofWireName(type), worker, text(node, "merchant"), text(node, "refund"),
                node.path("token").asLong(), text(node, "detail"), at, node.path("pid").asLong());
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }
}
