package dev.fenced.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Every refund the gateway created, in order, appended to a JSON-lines file that is read back on
 * start so that the ledger survives a restart. Thread-safe: one lock orders creations.
 */
final class Ledger implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<GatewayRefund> refunds = new ArrayList<>();
    private final Map<String, GatewayRefund> byKey = new HashMap<>();
    private final BufferedWriter writer;

    Ledger(Path file) {
        try {
            if (file != null && Files.exists(file)) {
                for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                    if (!line.isBlank()) {
                        remember(JSON.readValue(line, GatewayRefund.class));
                    }
                }
            }
            this.writer = file == null ? null : Files.newBufferedWriter(file, StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("could not open the gateway ledger " + file, e);
        }
    }

    /** The refund created under {@code key}, if any. */
    synchronized Optional<GatewayRefund> byKey(String key) {
        return Optional.ofNullable(byKey.get(key));
    }

    /**
     * Creates a refund, or returns the one already created under the key when {@code idempotent}.
     *
     * @return the refund and whether it was created by this call
     */
    synchronized Map.Entry<GatewayRefund, Boolean> create(String key, String reference, String merchant, BigDecimal amount,
                                                          String currency, boolean idempotent) {
        if (idempotent) {
            GatewayRefund existing = byKey.get(key);
            if (existing != null) {
                return Map.entry(existing, false);
            }
        }
        GatewayRefund refund = new GatewayRefund(String.format("gw_%06d", refunds.size() + 1), key, reference, merchant,
                amount, currency, System.currentTimeMillis());
        append(refund);
        remember(refund);
        return Map.entry(refund, true);
    }

    synchronized List<GatewayRefund> byReference(String reference) {
        return refunds.stream().filter(r -> r.reference().equals(reference)).toList();
    }

    synchronized List<GatewayRefund> all() {
        return List.copyOf(refunds);
    }

    private void remember(GatewayRefund refund) {
        refunds.add(refund);
        byKey.putIfAbsent(refund.idempotencyKey(), refund);
    }

    private void append(GatewayRefund refund) {
        if (writer == null) {
            return;
        }
        try {
            writer.write(JSON.writeValueAsString(refund));
            writer.newLine();
            writer.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("could not append to the gateway ledger", e);
        }
    }

    @Override
    public synchronized void close() {
        if (writer != null) {
            try {
                writer.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
