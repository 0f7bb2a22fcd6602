package dev.fenced.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementOutcome;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** A worker's events and results as JSON lines on stdout, the protocol its orchestrator reads. */
final class EventLines {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long PID = ProcessHandle.current().pid();

    private EventLines() {
    }

    static void event(SettlementEvent event, String merchant) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("type", event.type());
        line.put("worker", event.worker());
        line.put("merchant", merchant);
        line.put("refund", event.refundId());
        line.put("token", event.token());
        line.put("detail", event.detail());
        line.put("at", event.atMillis());
        line.put("pid", PID);
        emit(line);
    }

    static void result(SettlementOutcome outcome, String worker) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("type", "result");
        line.put("worker", worker);
        line.put("merchant", outcome.merchant());
        line.put("result", outcome.result().name());
        line.put("token", outcome.token());
        line.put("sent", outcome.sent());
        line.put("recovered", outcome.recovered());
        line.put("failed", outcome.failed());
        line.put("skipped", outcome.skipped());
        line.put("left", outcome.left());
        if (outcome.violation() != null) {
            line.put("refusedAt", String.valueOf(outcome.violation().rowId()));
            line.put("storedFence", outcome.violation().storedFence());
            line.put("storedState", outcome.violation().storedState());
        }
        line.put("error", outcome.error());
        line.put("at", System.currentTimeMillis());
        emit(line);
    }

    static void emit(Map<String, Object> line) {
        try {
            String text = JSON.writeValueAsString(line);
            synchronized (System.out) {
                System.out.println(text);
                System.out.flush();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
